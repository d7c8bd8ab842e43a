package io.quorumkv.storage.lsm.sstable;

import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * One bloom filter per table. With {@code b} bits per key it uses {@code k = round(b ln
 * 2)} probes (7 for 10 bits, about 0.8–1% false positives), derived by double hashing
 * {@code h1 + i * h2} from one 64-bit hash of the key.
 *
 * <pre>
 * filter = u8 k | u32 wordCount | u64 word * wordCount     (then u32 crc32c in the file)
 * </pre>
 */
public final class BloomFilter {

	private final long[] words;

	private final int probes;

	private final long bitCount;

	private BloomFilter(long[] words, int probes) {
		this.words = words;
		this.probes = probes;
		this.bitCount = (long) words.length * 64;
	}

	/** An empty filter sized for {@code keys} keys. */
	public static BloomFilter create(long keys, int bitsPerKey) {
		long bits = Math.max(64, keys * bitsPerKey);
		int wordCount = (int) Math.min(Integer.MAX_VALUE - 8, (bits + 63) / 64);
		int probes = (int) Math.max(1, Math.min(30, Math.round(bitsPerKey * Math.log(2))));
		return new BloomFilter(new long[wordCount], probes);
	}

	public void add(byte[] key) {
		addHash(hash(key));
	}

	void addHash(long hash) {
		long h1 = hash;
		long h2 = (hash >>> 32) | (hash << 32) | 1;
		for (int i = 0; i < this.probes; i++) {
			long bit = Math.floorMod(h1 + i * h2, this.bitCount);
			this.words[(int) (bit >>> 6)] |= 1L << bit;
		}
	}

	public boolean mayContain(byte[] key) {
		long hash = hash(key);
		long h1 = hash;
		long h2 = (hash >>> 32) | (hash << 32) | 1;
		for (int i = 0; i < this.probes; i++) {
			long bit = Math.floorMod(h1 + i * h2, this.bitCount);
			if ((this.words[(int) (bit >>> 6)] & (1L << bit)) == 0) {
				return false;
			}
		}
		return true;
	}

	/**
	 * FNV-1a over the bytes, then the MurmurHash3 64-bit finalizer to spread the bits.
	 */
	static long hash(byte[] key) {
		long h = 0xcbf29ce484222325L;
		for (byte b : key) {
			h ^= (b & 0xFF);
			h *= 0x100000001b3L;
		}
		h ^= h >>> 33;
		h *= 0xff51afd7ed558ccdL;
		h ^= h >>> 33;
		h *= 0xc4ceb9fe1a85ec53L;
		h ^= h >>> 33;
		return h;
	}

	byte[] encode() {
		ByteBuffer out = ByteBuffer.allocate(5 + 8 * this.words.length);
		out.put((byte) this.probes).putInt(this.words.length);
		for (long w : this.words) {
			out.putLong(w);
		}
		return out.array();
	}

	/** Decodes a checksum-verified filter; {@code null} when its lengths disagree. */
	static @Nullable BloomFilter decode(byte[] bytes) {
		if (bytes.length < 5) {
			return null;
		}
		ByteBuffer in = ByteBuffer.wrap(bytes);
		int probes = in.get();
		int wordCount = in.getInt();
		if (probes < 1 || probes > 30 || wordCount < 1 || (long) wordCount * 8 != bytes.length - 5) {
			return null;
		}
		long[] words = new long[wordCount];
		in.asLongBuffer().get(words);
		return new BloomFilter(words, probes);
	}

	long sizeInBytes() {
		return 8L * this.words.length;
	}

}
