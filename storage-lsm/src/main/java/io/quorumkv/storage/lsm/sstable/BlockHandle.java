package io.quorumkv.storage.lsm.sstable;

import java.nio.ByteBuffer;

/**
 * Where a block lives in a table file: {@code u64 offset | u32 size} (big-endian), the
 * size excluding the block's 4-byte CRC32C trailer. Offsets are longs: tables may exceed
 * 2 GiB.
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

	/** The first byte after the block and its checksum. */
	long end() {
		return this.offset + this.size + 4;
	}

}
