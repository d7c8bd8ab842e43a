package io.quorumkv.service.replication;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.Entry;

/**
 * Cuts a replica scan stream ({@link InternalApi#encode frames}) into entries, whatever
 * the boundaries of the network buffers. One decoder per stream; holds at most one
 * incomplete frame.
 */
final class FrameDecoder {

	private final int maxFrameSize;

	private ByteBuffer pending = ByteBuffer.allocate(0);

	FrameDecoder(int maxFrameSize) {
		this.maxFrameSize = maxFrameSize;
	}

	/** Entries completed by {@code chunk}; the rest is kept for the next call. */
	List<Entry> decode(byte[] chunk) {
		ByteBuffer input = concat(this.pending, chunk);
		List<Entry> entries = new ArrayList<>();
		while (true) {
			input.mark();
			Entry entry = next(input);
			if (entry == null) {
				input.reset();
				break;
			}
			entries.add(entry);
		}
		this.pending = input.slice();
		return entries;
	}

	/** Whether the stream ended between frames. */
	boolean isComplete() {
		return !this.pending.hasRemaining();
	}

	private Entry next(ByteBuffer input) {
		if (input.remaining() < 4) {
			return null;
		}
		int keyLength = input.getInt();
		check(keyLength > 0 && keyLength <= this.maxFrameSize, "key length " + keyLength);
		if (input.remaining() < keyLength + 12) {
			return null;
		}
		byte[] key = new byte[keyLength];
		input.get(key);
		long timestamp = input.getLong();
		int valueLength = input.getInt();
		check(valueLength >= -1 && valueLength <= this.maxFrameSize, "value length " + valueLength);
		if (valueLength < 0) {
			return Entry.tombstone(key, timestamp);
		}
		if (input.remaining() < valueLength) {
			return null;
		}
		byte[] value = new byte[valueLength];
		input.get(value);
		return Entry.value(key, value, timestamp);
	}

	private static void check(boolean condition, String what) {
		if (!condition) {
			throw new PeerException("malformed replica scan frame: " + what);
		}
	}

	private static ByteBuffer concat(ByteBuffer pending, byte[] chunk) {
		if (!pending.hasRemaining()) {
			return ByteBuffer.wrap(chunk);
		}
		ByteBuffer joined = ByteBuffer.allocate(pending.remaining() + chunk.length);
		joined.put(pending).put(chunk).flip();
		return joined;
	}

}
