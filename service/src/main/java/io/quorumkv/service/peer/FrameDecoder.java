package io.quorumkv.service.peer;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * Cuts a stream of frames into values, whatever the boundaries of the network buffers:
 * the one decoder of every framed stream between nodes (replica scans, repair's digests,
 * transfers), each with its own {@link Reader}. One decoder per stream; it holds at most
 * one incomplete frame.
 *
 * @param <T> what a frame holds
 */
public final class FrameDecoder<T> {

	/**
	 * Reads one frame.
	 *
	 * @param <T> what a frame holds
	 */
	@FunctionalInterface
	public interface Reader<T> {

		/**
		 * The next complete frame of {@code input}, or null when it ends inside one (the
		 * decoder then puts its position back); it checks every length before use and
		 * throws on a malformed frame.
		 */
		@Nullable T next(ByteBuffer input);

	}

	private final Reader<T> reader;

	private ByteBuffer pending = ByteBuffer.allocate(0);

	public FrameDecoder(Reader<T> reader) {
		this.reader = reader;
	}

	/** A decoder of a replica scan stream ({@link EntryFrame frames}) into entries. */
	public static FrameDecoder<Entry> entries(int maxFrameSize) {
		return new FrameDecoder<>((input) -> {
			try {
				return EntryFrame.read(input, maxFrameSize, maxFrameSize);
			}
			catch (BufferUnderflowException ex) {
				return null;
			}
			catch (EntryFrame.MalformedFrameException ex) {
				throw new PeerException("malformed replica scan frame: " + ex.getMessage());
			}
		});
	}

	/** The values completed by {@code chunk}; the rest is kept for the next call. */
	public List<T> decode(byte[] chunk) {
		ByteBuffer input = concat(this.pending, chunk);
		List<T> values = new ArrayList<>();
		while (true) {
			input.mark();
			T value = this.reader.next(input);
			if (value == null) {
				input.reset();
				break;
			}
			values.add(value);
		}
		this.pending = input.slice();
		return values;
	}

	/** Whether the stream ended between frames. */
	public boolean isComplete() {
		return !this.pending.hasRemaining();
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
