package io.quorumkv.storage.lsm.sstable;

import java.nio.ByteBuffer;

import io.quorumkv.storage.Keys;
import org.jspecify.annotations.Nullable;

/**
 * The properties block of a table.
 *
 * <pre>
 * properties = u32 minKeyLength | minKey | u32 maxKeyLength | maxKey | u64 entryCount
 *              | u64 tombstoneCount | i64 minTimestamp | i64 maxTimestamp
 *              | (version 2) u8 compression | u64 rawDataBytes | u64 storedDataBytes
 * </pre>
 *
 * Invariants: {@code minKey <= maxKey}, both non-empty; the entry count and the maximum
 * timestamp equal the footer's; {@code compression} is a {@link BlockCodec} id (the
 * writer's setting; each block says how it is stored); {@code 0 <= storedDataBytes},
 * {@code 0 <= rawDataBytes}. A version-1 table has no compression fields: it reads as
 * uncompressed, its data bytes being the bytes before its bloom block.
 *
 * @param compression the id of the codec the table was written with
 * @param rawDataBytes bytes of the data blocks before compression
 * @param storedDataBytes bytes of the data blocks as stored (trailers excluded)
 */
public record TableProperties(byte[] minKey, byte[] maxKey, long entryCount, long tombstoneCount, long minTimestamp,
		long maxTimestamp, int compression, long rawDataBytes, long storedDataBytes) {

	private static final int FIXED_V1 = 8 + 32;

	private static final int FIXED_V2 = FIXED_V1 + 1 + 16;

	/** The block in the {@link TableFormat#CURRENT current} format. */
	byte[] encode() {
		ByteBuffer out = ByteBuffer.allocate(FIXED_V2 + this.minKey.length + this.maxKey.length);
		out.putInt(this.minKey.length).put(this.minKey).putInt(this.maxKey.length).put(this.maxKey);
		out.putLong(this.entryCount).putLong(this.tombstoneCount).putLong(this.minTimestamp).putLong(this.maxTimestamp);
		out.put((byte) this.compression).putLong(this.rawDataBytes).putLong(this.storedDataBytes);
		return out.array();
	}

	/**
	 * Decodes a checksum-verified block of a table of format {@code version} whose data
	 * blocks end at {@code dataEnd}; {@code null} when its lengths or fields disagree.
	 */
	static @Nullable TableProperties decode(byte[] bytes, int version, long dataEnd) {
		ByteBuffer in = ByteBuffer.wrap(bytes);
		int tail = (version == TableFormat.VERSION_1) ? FIXED_V1 - 8 : FIXED_V2 - 8;
		if (bytes.length < tail + 8) {
			return null;
		}
		int minLength = in.getInt();
		if (minLength <= 0 || minLength > in.remaining() - 4 - tail) {
			return null;
		}
		byte[] min = new byte[minLength];
		in.get(min);
		int maxLength = in.getInt();
		if (maxLength <= 0 || maxLength != in.remaining() - tail) {
			return null;
		}
		byte[] max = new byte[maxLength];
		in.get(max);
		if (Keys.compare(min, max) > 0) {
			return null;
		}
		long entries = in.getLong();
		long tombstones = in.getLong();
		long minTimestamp = in.getLong();
		long maxTimestamp = in.getLong();
		if (version == TableFormat.VERSION_1) {
			return new TableProperties(min, max, entries, tombstones, minTimestamp, maxTimestamp, BlockCodec.NONE.id(),
					dataEnd, dataEnd);
		}
		int compression = Byte.toUnsignedInt(in.get());
		long raw = in.getLong();
		long stored = in.getLong();
		if (raw < 0 || stored < 0 || stored > dataEnd || BlockCodec.byId(compression) == null) {
			return null;
		}
		return new TableProperties(min, max, entries, tombstones, minTimestamp, maxTimestamp, compression, raw, stored);
	}

	public boolean mayContainKey(byte[] key) {
		return Keys.compare(key, this.minKey) >= 0 && Keys.compare(key, this.maxKey) <= 0;
	}

}
