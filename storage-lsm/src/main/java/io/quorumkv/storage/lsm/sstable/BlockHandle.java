package io.quorumkv.storage.lsm.sstable;

import java.nio.ByteBuffer;

/**
 * Where a block lives in a table file: {@code u64 offset | u32 size} (big-endian), the
 * size of the block as stored, excluding its trailer (the CRC32C, and in format version 2
 * the codec byte before it: {@link TableFormat#trailerSize}). Offsets are longs: tables
 * may exceed 2 GiB.
 */
public record BlockHandle(long offset, int size) {

	public static final int ENCODED_SIZE = 12;

	public BlockHandle {
		if (offset < 0 || size < 0) {
			throw new IllegalArgumentException("bad block handle " + offset + "/" + size);
		}
	}

	void write(ByteBuffer out) {
		out.putLong(this.offset).putInt(this.size);
	}

	/**
	 * Reads a handle without validating it; the reader bound-checks it against the file.
	 */
	static long[] read(ByteBuffer in) {
		return new long[] { in.getLong(), in.getInt() };
	}

	/** The first byte after the block and its trailer in a table of {@code version}. */
	long end(int version) {
		return this.offset + this.size + TableFormat.trailerSize(version);
	}

}
