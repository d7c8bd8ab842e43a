package io.quorumkv.storage.lsm.sstable;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.function.LongFunction;

import org.jspecify.annotations.Nullable;

/**
 * One bloom filter per table. With {@code b} bits per key it uses {@code k = round(b ln
 * 2)} probes (7 for 10 bits, about 0.8–1% false positives), derived by double hashing
 * {@code h1 + i * h2} from one 64-bit hash of the key.
 *
 * <pre>
 * filter = u8 k | u32 wordCount | u64 word * wordCount     (then the block trailer)
 * </pre>
 *
 * <p>
 * The filter is its encoded bytes in a {@link MemorySegment}: a table's filter is a slice
 * of a copy in the table's arena (off the Java heap, see {@link SsTable}); a filter being
 * built by a table builder is in the builder's own arena, off the heap too. Probes read
 * the big-endian words where they lie.
 */
public final class BloomFilter {

	private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

	private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

	static final int HEADER = 5;

	/** The encoded filter: header, then the words. */
	private final MemorySegment bytes;

	private final int probes;

	private final long bitCount;

	private BloomFilter(MemorySegment bytes, int probes, long wordCount) {
		this.bytes = bytes;
		this.probes = probes;
		this.bitCount = wordCount * 64;
	}

	/** An empty filter sized for {@code keys} keys, on the heap. */
	public static BloomFilter create(long keys, int bitsPerKey) {
		return create(keys, bitsPerKey, (size) -> MemorySegment.ofArray(new byte[Math.toIntExact(size)]));
	}

	/**
	 * An empty filter sized for {@code keys} keys, in memory of {@code arena} (a table
	 * builder's, off the heap: a large table's filter is over half a G1 region).
	 */
	public static BloomFilter create(long keys, int bitsPerKey, Arena arena) {
		return create(keys, bitsPerKey, (size) -> arena.allocate(size).fill((byte) 0));
	}

	private static BloomFilter create(long keys, int bitsPerKey, LongFunction<MemorySegment> allocate) {
		long bits = Math.max(64, keys * bitsPerKey);
		int wordCount = (int) Math.min((Integer.MAX_VALUE - 8 - HEADER) / 8, (bits + 63) / 64);
		int probes = (int) Math.max(1, Math.min(30, Math.round(bitsPerKey * Math.log(2))));
		MemorySegment bytes = allocate.apply(HEADER + 8L * wordCount);
		bytes.set(ValueLayout.JAVA_BYTE, 0, (byte) probes);
		bytes.set(INT, 1, wordCount);
		return new BloomFilter(bytes, probes, wordCount);
	}

	public void add(byte[] key) {
		addHash(hash(key));
	}

	void addHash(long hash) {
		long h1 = hash;
		long h2 = (hash >>> 32) | (hash << 32) | 1;
		for (int i = 0; i < this.probes; i++) {
			long bit = Math.floorMod(h1 + i * h2, this.bitCount);
			long at = HEADER + 8 * (bit >>> 6);
			this.bytes.set(WORD, at, this.bytes.get(WORD, at) | (1L << bit));
		}
	}

	public boolean mayContain(byte[] key) {
		long hash = hash(key);
		long h1 = hash;
		long h2 = (hash >>> 32) | (hash << 32) | 1;
		for (int i = 0; i < this.probes; i++) {
			long bit = Math.floorMod(h1 + i * h2, this.bitCount);
			if ((this.bytes.get(WORD, HEADER + 8 * (bit >>> 6)) & (1L << bit)) == 0) {
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

	/** The encoded filter, as written in a table (without its trailer). */
	MemorySegment encoded() {
		return this.bytes;
	}

	byte[] encode() {
		return this.bytes.toArray(ValueLayout.JAVA_BYTE);
	}

	/** Decodes a checksum-verified filter; {@code null} when its lengths disagree. */
	static @Nullable BloomFilter decode(byte[] bytes) {
		return decode(MemorySegment.ofArray(bytes));
	}

	/**
	 * A checksum-verified filter read where it lies in {@code bytes} (which must stay
	 * readable while the filter is used); {@code null} when its lengths disagree.
	 */
	static @Nullable BloomFilter decode(MemorySegment bytes) {
		if (bytes.byteSize() < HEADER) {
			return null;
		}
		int probes = bytes.get(ValueLayout.JAVA_BYTE, 0);
		long wordCount = Integer.toUnsignedLong(bytes.get(INT, 1));
		if (probes < 1 || probes > 30 || wordCount < 1 || wordCount * 8 != bytes.byteSize() - HEADER) {
			return null;
		}
		return new BloomFilter(bytes, probes, wordCount);
	}

	long sizeInBytes() {
		return this.bytes.byteSize() - HEADER;
	}

}
