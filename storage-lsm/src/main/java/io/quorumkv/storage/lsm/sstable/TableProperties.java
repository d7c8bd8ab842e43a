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
 * </pre>
 *
 * Invariants: {@code minKey <= maxKey}, both non-empty; the entry count and the maximum
 * timestamp equal the footer's.
 */
public record TableProperties(byte[] minKey, byte[] maxKey, long entryCount, long tombstoneCount, long minTimestamp,
		long maxTimestamp) {

	byte[] encode() {
		ByteBuffer out = ByteBuffer.allocate(8 + this.minKey.length + this.maxKey.length + 32);
		out.putInt(this.minKey.length).put(this.minKey).putInt(this.maxKey.length).put(this.maxKey);
		out.putLong(this.entryCount).putLong(this.tombstoneCount).putLong(this.minTimestamp).putLong(this.maxTimestamp);
		return out.array();
	}

	/** Decodes a checksum-verified block; {@code null} when its lengths disagree. */
	static @Nullable TableProperties decode(byte[] bytes) {
		ByteBuffer in = ByteBuffer.wrap(bytes);
		if (bytes.length < 40) {
			return null;
		}
		int minLength = in.getInt();
		if (minLength <= 0 || minLength > in.remaining() - 36) {
			return null;
		}
		byte[] min = new byte[minLength];
		in.get(min);
		int maxLength = in.getInt();
		if (maxLength <= 0 || maxLength != in.remaining() - 32) {
			return null;
		}
		byte[] max = new byte[maxLength];
		in.get(max);
		if (Keys.compare(min, max) > 0) {
			return null;
		}
		return new TableProperties(min, max, in.getLong(), in.getLong(), in.getLong(), in.getLong());
	}

	public boolean mayContainKey(byte[] key) {
		return Keys.compare(key, this.minKey) >= 0 && Keys.compare(key, this.maxKey) <= 0;
	}

}
