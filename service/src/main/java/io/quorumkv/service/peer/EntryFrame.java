package io.quorumkv.service.peer;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

import io.quorumkv.storage.Entry;

/**
 * The binary form of one entry between nodes: an upsert or a found entry in a batch
 * ({@link BatchCodec}) and a record of a replica scan ({@link InternalApi#encode}).
 * Big-endian.
 *
 * <pre>
 * frame = u32 keyLength | key | i64 timestamp | i32 valueLength | value
 *       | u32 keyLength | key | i64 timestamp | i32 -1                          (a tombstone)
 *       | u32 keyLength | key | i64 timestamp | i32 -4 | i64 expiresAt
 *         | i32 valueLength | value                                            (an expiring value)
 * </pre>
 *
 * The third form was added with expiry; the first two are the frames of before, written
 * alike, so an older node's frames decode unchanged. An older node refuses a frame of the
 * third form as malformed (a value length of -4): a write with a time to live fails on it
 * loudly rather than being kept without its expiry. The value lengths -2 and -3 are not
 * entries: a membership change's transfer stream ({@code TransferCodec}) carries these
 * frames among progress (-2) and estimate (-3) frames of its own.
 */
public final class EntryFrame {

	public static final int TOMBSTONE = -1;

	public static final int EXPIRING = -4;

	private EntryFrame() {
	}

	/** Bytes of {@code entry}'s frame. */
	public static int size(Entry entry) {
		byte[] value = entry.value();
		return 4 + entry.key().length + 8 + 4 + ((value == null) ? 0 : (entry.expires() ? 12 : 0) + value.length);
	}

	/** One frame of {@code entry}, in an array of its own. */
	public static byte[] encode(Entry entry) {
		ByteBuffer frame = ByteBuffer.allocate(size(entry));
		put(frame, entry);
		return frame.array();
	}

	public static void put(ByteBuffer out, Entry entry) {
		byte[] value = entry.value();
		out.putInt(entry.key().length).put(entry.key()).putLong(entry.timestamp());
		if (value == null) {
			out.putInt(TOMBSTONE);
			return;
		}
		if (entry.expires()) {
			out.putInt(EXPIRING).putLong(entry.expiresAt());
		}
		out.putInt(value.length).put(value);
	}

	/**
	 * The next frame of {@code in}.
	 * @throws BufferUnderflowException when {@code in} ends inside the frame (its lengths
	 * checked first, so no array larger than the limits is allocated)
	 * @throws MalformedFrameException when a length is out of its bounds
	 */
	public static Entry read(ByteBuffer in, int maxKeySize, int maxValueSize) {
		int keyLength = in.getInt();
		if (keyLength < 1 || keyLength > maxKeySize) {
			throw new MalformedFrameException("key length " + keyLength + " outside 1.." + maxKeySize);
		}
		if (in.remaining() < keyLength) {
			throw new BufferUnderflowException();
		}
		byte[] key = new byte[keyLength];
		in.get(key);
		long timestamp = in.getLong();
		int length = in.getInt();
		long expiresAt = Entry.NO_EXPIRY;
		if (length == EXPIRING) {
			expiresAt = in.getLong();
			length = in.getInt();
			if (expiresAt == Entry.NO_EXPIRY || length < 0) {
				throw new MalformedFrameException("expiring value with expiry " + expiresAt + ", length " + length);
			}
		}
		if (length < TOMBSTONE || length > maxValueSize) {
			throw new MalformedFrameException("value length " + length + " outside -1.." + maxValueSize);
		}
		if (length == TOMBSTONE) {
			return Entry.wrap(key, null, timestamp, Entry.NO_EXPIRY);
		}
		if (in.remaining() < length) {
			throw new BufferUnderflowException();
		}
		byte[] value = new byte[length];
		in.get(value);
		return Entry.wrap(key, value, timestamp, expiresAt);
	}

	/** A frame whose lengths are out of bounds. */
	public static final class MalformedFrameException extends RuntimeException {

		public MalformedFrameException(String message) {
			super(message, null, false, false);
		}

	}

}
