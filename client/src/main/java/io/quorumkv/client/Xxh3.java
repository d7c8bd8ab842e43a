package io.quorumkv.client;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * XXH3-64 with seed 0 (the xxHash specification, version 0.8), the hash the nodes place
 * keys with ({@code docs/client.md}, "Routing"): {@link #hash(byte[])} of a key's bytes
 * and {@link #hash(long, long)} of two longs, which is the hash of their 16 little-endian
 * bytes. XXH3 is a specified algorithm, so these values are the nodes' values on every
 * JVM; {@code PlacementAgreementTest} checks them against the nodes' own library for
 * every length up to several blocks, and the placements built on them against the nodes'
 * placement. Stateless and thread-safe.
 */
final class Xxh3 {

	private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

	private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

	private static final long PRIME32_1 = 0x9E3779B1L;

	private static final long PRIME32_2 = 0x85EBCA77L;

	private static final long PRIME32_3 = 0xC2B2AE3DL;

	private static final long PRIME64_1 = 0x9E3779B185EBCA87L;

	private static final long PRIME64_2 = 0xC2B2AE3D27D4EB4FL;

	private static final long PRIME64_3 = 0x165667B19E3779F9L;

	private static final long PRIME64_4 = 0x85EBCA77C2B2AE63L;

	private static final long PRIME64_5 = 0x27D4EB2F165667C5L;

	private static final long PRIME_MX1 = 0x165667919E3779F9L;

	private static final long PRIME_MX2 = 0x9FB21C651E98DF25L;

	/** The specification's default secret (192 bytes). */
	private static final byte[] SECRET = bytes("b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
			+ "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
			+ "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
			+ "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
			+ "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e"
			+ "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e");

	private static final int STRIPE = 64;

	/** Stripes per block: (secret size - stripe) / 8. */
	private static final int STRIPES_PER_BLOCK = (192 - STRIPE) / 8;

	private static final int BLOCK = STRIPE * STRIPES_PER_BLOCK;

	private Xxh3() {
	}

	/** XXH3-64 of {@code input}, seed 0. */
	static long hash(byte[] input) {
		int length = input.length;
		if (length <= 16) {
			return hashUpTo16(input, length);
		}
		if (length <= 128) {
			return hash17To128(input, length);
		}
		if (length <= 240) {
			return hash129To240(input, length);
		}
		return hashLong(input, length);
	}

	/** XXH3-64 of the 16 bytes of {@code a} then {@code b}, little-endian. */
	static long hash(long a, long b) {
		return hash9To16(a, b, 16);
	}

	private static long hashUpTo16(byte[] in, int length) {
		if (length > 8) {
			return hash9To16(long64(in, 0), long64(in, length - 8), length);
		}
		if (length >= 4) {
			long bitflip = long64(SECRET, 8) ^ long64(SECRET, 16);
			long combined = (int32(in, length - 4)) + (int32(in, 0) << 32);
			return rrmxmx(combined ^ bitflip, length);
		}
		if (length > 0) {
			long c1 = in[0] & 0xff;
			long c2 = in[length >> 1] & 0xff;
			long c3 = in[length - 1] & 0xff;
			long combined = (c1 << 16) | (c2 << 24) | c3 | ((long) length << 8);
			long bitflip = int32(SECRET, 0) ^ int32(SECRET, 4);
			return xxh64Avalanche(combined ^ bitflip);
		}
		return xxh64Avalanche(long64(SECRET, 56) ^ long64(SECRET, 64));
	}

	private static long hash9To16(long first, long last, int length) {
		long low = first ^ (long64(SECRET, 24) ^ long64(SECRET, 32));
		long high = last ^ (long64(SECRET, 40) ^ long64(SECRET, 48));
		long acc = length + Long.reverseBytes(low) + high + fold(low, high);
		return avalanche(acc);
	}

	private static long hash17To128(byte[] in, int length) {
		long acc = length * PRIME64_1;
		if (length > 32) {
			if (length > 64) {
				if (length > 96) {
					acc += mix16(in, 48, 96);
					acc += mix16(in, length - 64, 112);
				}
				acc += mix16(in, 32, 64);
				acc += mix16(in, length - 48, 80);
			}
			acc += mix16(in, 16, 32);
			acc += mix16(in, length - 32, 48);
		}
		acc += mix16(in, 0, 0);
		acc += mix16(in, length - 16, 16);
		return avalanche(acc);
	}

	private static long hash129To240(byte[] in, int length) {
		long acc = length * PRIME64_1;
		int rounds = length / 16;
		for (int i = 0; i < 8; i++) {
			acc += mix16(in, 16 * i, 16 * i);
		}
		acc = avalanche(acc);
		for (int i = 8; i < rounds; i++) {
			acc += mix16(in, 16 * i, 16 * (i - 8) + 3);
		}
		acc += mix16(in, length - 16, 136 - 17);
		return avalanche(acc);
	}

	private static long hashLong(byte[] in, int length) {
		long[] acc = { PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1 };
		int blocks = (length - 1) / BLOCK;
		for (int block = 0; block < blocks; block++) {
			for (int stripe = 0; stripe < STRIPES_PER_BLOCK; stripe++) {
				accumulate(acc, in, block * BLOCK + stripe * STRIPE, stripe * 8);
			}
			scramble(acc, SECRET.length - STRIPE);
		}
		int stripes = ((length - 1) - BLOCK * blocks) / STRIPE;
		for (int stripe = 0; stripe < stripes; stripe++) {
			accumulate(acc, in, blocks * BLOCK + stripe * STRIPE, stripe * 8);
		}
		accumulate(acc, in, length - STRIPE, SECRET.length - STRIPE - 7);
		long result = length * PRIME64_1;
		for (int i = 0; i < 4; i++) {
			result += fold(acc[2 * i] ^ long64(SECRET, 11 + 16 * i), acc[2 * i + 1] ^ long64(SECRET, 11 + 16 * i + 8));
		}
		return avalanche(result);
	}

	private static void accumulate(long[] acc, byte[] in, int offset, int secretOffset) {
		for (int i = 0; i < 8; i++) {
			long data = long64(in, offset + 8 * i);
			long keyed = data ^ long64(SECRET, secretOffset + 8 * i);
			acc[i ^ 1] += data;
			acc[i] += (keyed & 0xFFFFFFFFL) * (keyed >>> 32);
		}
	}

	private static void scramble(long[] acc, int secretOffset) {
		for (int i = 0; i < 8; i++) {
			long value = acc[i];
			value ^= value >>> 47;
			value ^= long64(SECRET, secretOffset + 8 * i);
			acc[i] = value * PRIME32_1;
		}
	}

	private static long mix16(byte[] in, int offset, int secretOffset) {
		return fold(long64(in, offset) ^ long64(SECRET, secretOffset),
				long64(in, offset + 8) ^ long64(SECRET, secretOffset + 8));
	}

	/** The 128-bit product's two halves, XORed. */
	private static long fold(long a, long b) {
		return (a * b) ^ Math.unsignedMultiplyHigh(a, b);
	}

	private static long avalanche(long h) {
		h ^= h >>> 37;
		h *= PRIME_MX1;
		return h ^ (h >>> 32);
	}

	private static long rrmxmx(long h, int length) {
		h ^= Long.rotateLeft(h, 49) ^ Long.rotateLeft(h, 24);
		h *= PRIME_MX2;
		h ^= (h >>> 35) + length;
		h *= PRIME_MX2;
		return h ^ (h >>> 28);
	}

	private static long xxh64Avalanche(long h) {
		h ^= h >>> 33;
		h *= PRIME64_2;
		h ^= h >>> 29;
		h *= PRIME64_3;
		return h ^ (h >>> 32);
	}

	private static long long64(byte[] bytes, int offset) {
		return (long) LONG.get(bytes, offset);
	}

	private static long int32(byte[] bytes, int offset) {
		return ((int) INT.get(bytes, offset)) & 0xFFFFFFFFL;
	}

	private static byte[] bytes(String hex) {
		byte[] bytes = new byte[hex.length() / 2];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = (byte) Integer.parseInt(hex, 2 * i, 2 * i + 2, 16);
		}
		return bytes;
	}

}
