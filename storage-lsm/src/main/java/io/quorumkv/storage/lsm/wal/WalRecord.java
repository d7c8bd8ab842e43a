package io.quorumkv.storage.lsm.wal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * payload = u8 kind (0 value, 1 tombstone, 2 expiring value) | i64 timestamp
 *           | (kind 2 only) i64 expiresAt | u32 keyLength | key
 *           | (kinds 0 and 2) u32 valueLength | value
 * </pre>
 *
 * Version 2 of the format added kind 2; a version-1 segment holds kinds 0 and 1 only and
 * is read as it is. A reader of version 1 finds a kind-2 record malformed: a segment
 * holding one cannot be replayed by an older engine, which refuses it loudly.
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

	static final byte KIND_EXPIRING = 2;

	/** The format version this class writes (kind 2 added in version 2). */
	public static final int FORMAT_VERSION = 2;

	private static final VarHandle INTS = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

	private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

	private WalRecord() {
	}

	/** The full record (header and payload) of {@code entry}. */
	public static byte[] encode(Entry entry) {
		byte[] out = new byte[encodedSize(entry)];
		encode(entry, out, 0);
		return out;
	}

	/** Bytes of {@code entry}'s full record. */
	public static int encodedSize(Entry entry) {
		return HEADER_SIZE + payloadSize(entry);
	}

	/**
	 * Writes {@code entry}'s full record into {@code out} at {@code offset}.
	 * @return the offset after it
	 */
	public static int encode(Entry entry, byte[] out, int offset) {
		byte[] key = entry.key();
		byte[] value = entry.value();
		int payloadLength = payloadSize(entry);
		int at = offset + HEADER_SIZE;
		out[at] = (value == null) ? KIND_TOMBSTONE : entry.expires() ? KIND_EXPIRING : KIND_VALUE;
		LONGS.set(out, at + 1, entry.timestamp());
		at += 9;
		if (entry.expires()) {
			LONGS.set(out, at, entry.expiresAt());
			at += 8;
		}
		INTS.set(out, at, key.length);
		System.arraycopy(key, 0, out, at + 4, key.length);
		if (value != null) {
			INTS.set(out, at + 4 + key.length, value.length);
			System.arraycopy(value, 0, out, at + 8 + key.length, value.length);
		}
		INTS.set(out, offset, payloadLength);
		INTS.set(out, offset + 4, crc(out, offset + HEADER_SIZE, payloadLength));
		INTS.set(out, offset + 8, crc(out, offset, 8));
		return offset + HEADER_SIZE + payloadLength;
	}

	private static int payloadSize(Entry entry) {
		byte[] value = entry.value();
		return 1 + 8 + (entry.expires() ? 8 : 0) + 4 + entry.key().length + ((value != null) ? 4 + value.length : 0);
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
		if (kind != KIND_VALUE && kind != KIND_TOMBSTONE && kind != KIND_EXPIRING) {
			return null;
		}
		long expiresAt = Entry.NO_EXPIRY;
		if (kind == KIND_EXPIRING) {
			if (buffer.remaining() < 12) {
				return null;
			}
			expiresAt = buffer.getLong();
			if (expiresAt == Entry.NO_EXPIRY) {
				return null;
			}
		}
		int keyLength = buffer.getInt();
		if (keyLength <= 0 || keyLength > buffer.remaining()) {
			return null;
		}
		byte[] key = new byte[keyLength];
		buffer.get(key);
		if (kind == KIND_TOMBSTONE) {
			return (buffer.remaining() == 0) ? Entry.wrap(key, null, timestamp, Entry.NO_EXPIRY) : null;
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
		return Entry.wrap(key, value, timestamp, expiresAt);
	}

}
