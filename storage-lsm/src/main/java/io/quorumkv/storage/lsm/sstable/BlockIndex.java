package io.quorumkv.storage.lsm.sstable;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A table's index block read where it lies (layout in {@code docs/formats/sstable.md}):
 *
 * <pre>
 * index = u32 blockCount | (u32 keyLength | lastKey | u64 offset | u32 size) * blockCount
 * </pre>
 *
 * <p>
 * The entries have variable lengths, so decoding builds a table of their positions (one
 * {@code u32} per data block) in the same arena as the index bytes: nothing of the index
 * is on the Java heap, whatever the table's size. A binary search compares the sought key
 * with the last keys in place.
 */
final class BlockIndex {

	private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

	private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

	private static final ValueLayout.OfInt POSITION = ValueLayout.JAVA_INT;

	/** The index block (checksum verified), without its trailer. */
	private final MemorySegment bytes;

	/** Where each entry starts in {@link #bytes}: {@code count} ints. */
	private final MemorySegment positions;

	private final int count;

	private BlockIndex(MemorySegment bytes, MemorySegment positions, int count) {
		this.bytes = bytes;
		this.positions = positions;
		this.count = count;
	}

	/**
	 * Decodes a checksum-verified index block, checking each entry's lengths, that the
	 * last keys ascend strictly and that every handle ends, with its trailer, at or
	 * before {@code dataEnd}.
	 * @param arena where the position table is allocated: the table's own
	 * @throws IllegalArgumentException naming the first bad entry
	 */
	static BlockIndex decode(MemorySegment bytes, Arena arena, int version, long dataEnd) {
		long size = bytes.byteSize();
		if (size < 4) {
			throw new IllegalArgumentException("index of " + size + " bytes");
		}
		int count = bytes.get(INT, 0);
		if (count < 1 || count > (size - 4) / (4 + BlockHandle.ENCODED_SIZE)) {
			throw new IllegalArgumentException("bad block count " + count);
		}
		MemorySegment positions = arena.allocate(POSITION, count);
		long at = 4;
		long previousKey = -1;
		int previousLength = 0;
		for (int i = 0; i < count; i++) {
			int keyLength = (size - at >= 4) ? bytes.get(INT, at) : -1;
			if (keyLength <= 0 || keyLength > size - at - 4 - BlockHandle.ENCODED_SIZE) {
				throw new IllegalArgumentException("bad key length in entry " + i);
			}
			long key = at + 4;
			long offset = bytes.get(LONG, key + keyLength);
			long blockSize = Integer.toUnsignedLong(bytes.get(INT, key + keyLength + 8));
			if (offset < 0 || blockSize > Integer.MAX_VALUE
					|| offset + blockSize + TableFormat.trailerSize(version) > dataEnd
					|| (previousKey >= 0 && compare(bytes, previousKey, previousLength, bytes, key, keyLength) >= 0)) {
				throw new IllegalArgumentException("entry " + i + " out of bounds or out of order");
			}
			positions.setAtIndex(POSITION, i, (int) at);
			previousKey = key;
			previousLength = keyLength;
			at = key + keyLength + BlockHandle.ENCODED_SIZE;
		}
		return new BlockIndex(bytes, positions, count);
	}

	int count() {
		return this.count;
	}

	/** The first block whose last key is {@code >= key}; {@link #count()} when none. */
	int find(byte[] key) {
		MemorySegment sought = MemorySegment.ofArray(key);
		int lo = 0;
		int hi = this.count;
		while (lo < hi) {
			int mid = (lo + hi) >>> 1;
			long at = this.positions.getAtIndex(POSITION, mid);
			int length = this.bytes.get(INT, at);
			if (compare(this.bytes, at + 4, length, sought, 0, key.length) < 0) {
				lo = mid + 1;
			}
			else {
				hi = mid;
			}
		}
		return lo;
	}

	/** Where data block {@code i} is stored. */
	BlockHandle handle(int i) {
		long at = this.positions.getAtIndex(POSITION, i);
		long end = at + 4 + this.bytes.get(INT, at);
		return new BlockHandle(this.bytes.get(LONG, end), this.bytes.get(INT, end + 8));
	}

	/** Unsigned lexicographic order of two byte ranges, as {@code Keys.compare}. */
	private static int compare(MemorySegment a, long aFrom, int aLength, MemorySegment b, long bFrom, int bLength) {
		long mismatch = MemorySegment.mismatch(a, aFrom, aFrom + aLength, b, bFrom, bFrom + bLength);
		if (mismatch < 0) {
			return 0;
		}
		if (mismatch == aLength || mismatch == bLength) {
			return Integer.compare(aLength, bLength);
		}
		return Integer.compare(Byte.toUnsignedInt(a.get(ValueLayout.JAVA_BYTE, aFrom + mismatch)),
				Byte.toUnsignedInt(b.get(ValueLayout.JAVA_BYTE, bFrom + mismatch)));
	}

}
