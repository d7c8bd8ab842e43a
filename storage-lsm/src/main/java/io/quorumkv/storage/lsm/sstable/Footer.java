package io.quorumkv.storage.lsm.sstable;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The fixed-size footer, the last {@link #ENCODED_SIZE} bytes of a table file.
 *
 * <pre>
 * footer = indexHandle | bloomHandle | propertiesHandle      (3 x 12 bytes, see BlockHandle)
 *          | u64 entryCount | i64 maxTimestamp | u32 formatVersion
 *          | u32 crc32c(all preceding footer bytes) | u64 magic
 * </pre>
 *
 * Invariants: the magic is {@link #MAGIC}; the version is one {@link TableFormat} knows
 * (the layout of the footer is the same in each); the checksum matches; every handle
 * ends, with its block's trailer, before the footer.
 *
 * @param version the table's {@link TableFormat} version
 */
public record Footer(BlockHandle index, BlockHandle bloom, BlockHandle properties, long entryCount, long maxTimestamp,
		int version) {

	public static final int ENCODED_SIZE = 3 * BlockHandle.ENCODED_SIZE + 8 + 8 + 4 + 4 + 8;

	/** "QKVSST01" in ASCII. */
	public static final long MAGIC = 0x514b565353543031L;

	/** A footer of a new table, in the {@link TableFormat#CURRENT current} format. */
	public Footer(BlockHandle index, BlockHandle bloom, BlockHandle properties, long entryCount, long maxTimestamp) {
		this(index, bloom, properties, entryCount, maxTimestamp, TableFormat.CURRENT);
	}

	byte[] encode() {
		ByteBuffer out = ByteBuffer.allocate(ENCODED_SIZE);
		this.index.write(out);
		this.bloom.write(out);
		this.properties.write(out);
		out.putLong(this.entryCount).putLong(this.maxTimestamp).putInt(this.version);
		CRC32C crc = new CRC32C();
		crc.update(out.array(), 0, out.position());
		out.putInt((int) crc.getValue()).putLong(MAGIC);
		return out.array();
	}

	/**
	 * Decodes a footer of a file of {@code fileSize} bytes.
	 * @throws IllegalArgumentException naming what is wrong
	 */
	static Footer decode(byte[] bytes, long fileSize) {
		ByteBuffer in = ByteBuffer.wrap(bytes);
		if (bytes.length != ENCODED_SIZE) {
			throw new IllegalArgumentException("footer has " + bytes.length + " bytes");
		}
		if (in.getLong(ENCODED_SIZE - 8) != MAGIC) {
			throw new IllegalArgumentException("bad magic (not a QuorumKV table)");
		}
		CRC32C crc = new CRC32C();
		crc.update(bytes, 0, ENCODED_SIZE - 12);
		if ((int) crc.getValue() != in.getInt(ENCODED_SIZE - 12)) {
			throw new IllegalArgumentException("footer checksum mismatch");
		}
		int version = in.getInt(ENCODED_SIZE - 16);
		if (!TableFormat.isKnown(version)) {
			throw new IllegalArgumentException("unsupported format version " + version);
		}
		int trailer = TableFormat.trailerSize(version);
		BlockHandle[] handles = new BlockHandle[3];
		for (int i = 0; i < 3; i++) {
			long[] raw = BlockHandle.read(in);
			if (raw[0] < 0 || raw[1] < 0 || raw[0] + raw[1] + trailer > fileSize - ENCODED_SIZE) {
				throw new IllegalArgumentException("block handle " + raw[0] + "+" + raw[1] + " out of bounds");
			}
			handles[i] = new BlockHandle(raw[0], (int) raw[1]);
		}
		return new Footer(handles[0], handles[1], handles[2], in.getLong(), in.getLong(), version);
	}

}
