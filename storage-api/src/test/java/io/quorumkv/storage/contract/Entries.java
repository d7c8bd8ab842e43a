package io.quorumkv.storage.contract;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import io.quorumkv.storage.Entry;

/** Data builders for storage tests. */
public final class Entries {

	private Entries() {
	}

	public static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	public static byte[] bytes(int... unsignedBytes) {
		byte[] out = new byte[unsignedBytes.length];
		for (int i = 0; i < out.length; i++) {
			out[i] = (byte) unsignedBytes[i];
		}
		return out;
	}

	public static Entry put(String key, String value, long timestamp) {
		return Entry.value(bytes(key), bytes(value), timestamp);
	}

	public static Entry delete(String key, long timestamp) {
		return Entry.tombstone(bytes(key), timestamp);
	}

	/** Key {@code "key-%08d"}: the decimal order is the byte order. */
	public static byte[] numberedKey(int i) {
		return bytes(String.format("key-%08d", i));
	}

	/** The number of a {@link #numberedKey}. */
	public static int keyNumber(byte[] key) {
		return Integer.parseInt(new String(key, java.nio.charset.StandardCharsets.US_ASCII).substring(4));
	}

	public static byte[] randomBytes(Random random, int length) {
		byte[] out = new byte[length];
		random.nextBytes(out);
		return out;
	}

	/** Every byte value 0x00..0xFF once, in order. */
	public static byte[] allByteValues() {
		byte[] out = new byte[256];
		for (int i = 0; i < out.length; i++) {
			out[i] = (byte) i;
		}
		return out;
	}

}
