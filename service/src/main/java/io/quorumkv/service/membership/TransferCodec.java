package io.quorumkv.service.membership;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The frames of a transfer stream ({@code GET /internal/v0/transfer}): an entry is the
 * replica scan's frame ({@link InternalApi#encode}, decoded by
 * {@link InternalApi#decode}: a value, a tombstone, or an expiring value with its
 * expiry); a progress frame says how far the source's scan has come, now and then between
 * them:
 * {@code u32 keyLength, key (the last key scanned), i64 bytes scanned so far, i32 -2}
 * (estimated: a source's storage skips the values it does not send unread). Entries carry
 * no scan count: the next progress frame does. The stream opens with an estimate frame,
 * {@code u32 1, 0x00, i64 bytes the whole scan will read (-1: unknown),
 * i32 -3}. Decoding checks every length before use and keeps at most one incomplete
 * frame.
 */
final class TransferCodec {

	static final int PROGRESS = -2;

	static final int ESTIMATE = -3;

	static byte[] estimate(long bytes) {
		ByteBuffer frame = ByteBuffer.allocate(4 + 1 + 8 + 4);
		frame.putInt(1).put((byte) 0).putLong(bytes).putInt(ESTIMATE);
		return frame.array();
	}

	private TransferCodec() {
	}

	static byte[] progress(byte[] lastKey, long scannedBytes) {
		ByteBuffer frame = ByteBuffer.allocate(4 + lastKey.length + 8 + 4);
		frame.putInt(lastKey.length).put(lastKey).putLong(scannedBytes).putInt(PROGRESS);
		return frame.array();
	}

	/** One decoded frame. */
	sealed interface Frame {

		/** The last key the source scanned (entries come in key order). */
		byte[] key();

		/**
		 * An entry to keep.
		 *
		 * @param entry the entry
		 */
		record Data(Entry entry) implements Frame {

			@Override
			public byte[] key() {
				return this.entry.key();
			}

		}

		/**
		 * The source's scan reached {@code key}.
		 *
		 * @param key the last key scanned
		 * @param scannedBytes the bytes of keys and values scanned so far
		 */
		record Progress(byte[] key, long scannedBytes) implements Frame {
		}

		/**
		 * What the source's whole scan will read.
		 *
		 * @param bytes the estimate, -1 when unknown
		 */
		record Estimate(long bytes) implements Frame {

			@Override
			public byte[] key() {
				return new byte[0];
			}

		}

	}

	/** A decoder of a transfer stream into frames. */
	static FrameDecoder<Frame> decoder(int maxFrameSize) {
		return new FrameDecoder<>((input) -> next(input, maxFrameSize));
	}

	/** The next frame of {@code input}, or null when it ends inside one. */
	static @Nullable Frame next(ByteBuffer input, int maxFrameSize) {
		if (input.remaining() < 4) {
			return null;
		}
		int start = input.position();
		int keyLength = input.getInt(start);
		check(keyLength > 0 && keyLength <= maxFrameSize, "key length " + keyLength);
		if (input.remaining() < 4 + keyLength + 12) {
			return null;
		}
		int valueLength = input.getInt(start + 4 + keyLength + 8);
		if (valueLength == ESTIMATE || valueLength == PROGRESS) {
			input.position(start + 4);
			byte[] key = new byte[keyLength];
			input.get(key);
			long bytes = input.getLong();
			input.getInt();
			return (valueLength == ESTIMATE) ? new Frame.Estimate(bytes) : new Frame.Progress(key, bytes);
		}
		try {
			Entry entry = InternalApi.decode(input, maxFrameSize);
			return (entry != null) ? new Frame.Data(entry) : null;
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("malformed transfer frame: " + ex.getMessage());
		}
	}

	private static void check(boolean condition, String what) {
		if (!condition) {
			throw new IllegalStateException("malformed transfer frame: " + what);
		}
	}

}
