package io.quorumkv.service.peer;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * Cuts a replica scan stream ({@link EntryFrame frames}) into entries, whatever the
 * boundaries of the network buffers. One decoder per stream; holds at most one incomplete
 * frame.
 */
public final class FrameDecoder {

	private final int maxFrameSize;

	private ByteBuffer pending = ByteBuffer.allocate(0);

	public FrameDecoder(int maxFrameSize) {
		this.maxFrameSize = maxFrameSize;
	}

	/** Entries completed by {@code chunk}; the rest is kept for the next call. */
	public List<Entry> decode(byte[] chunk) {
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
	public boolean isComplete() {
		return !this.pending.hasRemaining();
	}

	/** The next complete frame of {@code input}, or null when it ends inside one. */
	private @Nullable Entry next(ByteBuffer input) {
		try {
			return EntryFrame.read(input, this.maxFrameSize, this.maxFrameSize);
		}
		catch (BufferUnderflowException ex) {
			return null;
		}
		catch (EntryFrame.MalformedFrameException ex) {
			throw new PeerException("malformed replica scan frame: " + ex.getMessage());
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
