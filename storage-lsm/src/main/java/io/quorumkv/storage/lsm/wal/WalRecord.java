package io.quorumkv.storage.lsm.wal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The one WAL record format (see {@code docs/formats/wal.md}). All integers big-endian.
 *
 * <pre>
 * record  = header payload
 * header  = u32 payloadLength | u32 crc32c(payload) | u32 crc32c(first 8 header bytes)
 * payload = u8 kind (0 value, 1 tombstone) | i64 timestamp | u32 keyLength | key
 *           | (kind 0 only) u32 valueLength | value
 * </pre>
 *
 * Invariants: the header checksum covers the length, so a damaged length is never taken
 * for a torn tail; the payload checksum covers every payload byte; a decoder checks every
 * inner length against the payload length.
 */
public final class WalRecord {

	/** Bytes of the header. */
	public static final int HEADER_SIZE = 12;

	/** The largest payload a record may claim; larger claims are damage. */
	public static final int MAX_PAYLOAD = 1 << 30;

	static final byte KIND_VALUE = 0;

	static final byte KIND_TOMBSTONE = 1;

	private WalRecord() {
	}

	/** The full record (header and payload) of {@code entry}. */
	public static byte[] encode(Entry entry) {
		byte[] key = entry.key();
		byte[] value = entry.value();
		int payloadLength = 1 + 8 + 4 + key.length + ((value != null) ? 4 + value.length : 0);
		ByteBuffer buffer = ByteBuffer.allocate(HEADER_SIZE + payloadLength).order(ByteOrder.BIG_ENDIAN);
		buffer.position(HEADER_SIZE);
		buffer.put((value != null) ? KIND_VALUE : KIND_TOMBSTONE);
		buffer.putLong(entry.timestamp());
		buffer.putInt(key.length).put(key);
		if (value != null) {
			buffer.putInt(value.length).put(value);
		}
		byte[] out = buffer.array();
		buffer.putInt(0, payloadLength);
		buffer.putInt(4, crc(out, HEADER_SIZE, payloadLength));
		buffer.putInt(8, crc(out, 0, 8));
		return out;
	}

	static int crc(byte[] bytes, int offset, int length) {
		CRC32C crc = new CRC32C();
		crc.update(bytes, offset, length);
		return (int) crc.getValue();
	}

	/**
	 * Decodes a payload whose checksum was verified.
	 * @return the entry, or {@code null} when an inner length is out of bounds
	 */
	static @Nullable Entry decodePayload(byte[] bytes, int offset, int length) {
		ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, length).order(ByteOrder.BIG_ENDIAN);
		if (length < 13) {
			return null;
		}
		byte kind = buffer.get();
		long timestamp = buffer.getLong();
		int keyLength = buffer.getInt();
		if (keyLength <= 0 || keyLength > buffer.remaining() || (kind != KIND_VALUE && kind != KIND_TOMBSTONE)) {
			return null;
		}
		byte[] key = new byte[keyLength];
		buffer.get(key);
		if (kind == KIND_TOMBSTONE) {
			return (buffer.remaining() == 0) ? Entry.tombstone(key, timestamp) : null;
		}
		if (buffer.remaining() < 4) {
			return null;
		}
		int valueLength = buffer.getInt();
		if (valueLength < 0 || valueLength != buffer.remaining()) {
			return null;
		}
		byte[] value = new byte[valueLength];
		buffer.get(value);
		return Entry.value(key, value, timestamp);
	}

}
