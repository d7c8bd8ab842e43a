package io.quorumkv.service.peer;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * Cuts a stream of length-prefixed frames ({@link StreamFrames}) into frames, whatever
 * the boundaries of the network buffers it arrives in. Holds at most one incomplete
 * frame, and refuses a frame longer than the limit before reading it. One assembler per
 * stream, used by one thread at a time.
 */
public final class FrameAssembler {

	private final int maxFrameSize;

	/**
	 * The incomplete frame: its bytes so far, length prefix included; empty when none.
	 */
	private ByteBuffer partial = ByteBuffer.allocate(0);

	public FrameAssembler(int maxFrameSize) {
		this.maxFrameSize = maxFrameSize;
	}

	/**
	 * Hands every frame that {@code buffer} completes to {@code frame} (as a buffer of
	 * exactly its bytes after the length prefix) and keeps the rest; releases
	 * {@code buffer}.
	 * @throws EntryFrame.MalformedFrameException when a frame's length is out of bounds
	 */
	public void feed(DataBuffer buffer, Consumer<ByteBuffer> frame) {
		byte[] bytes;
		try {
			bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
		}
		finally {
			DataBufferUtils.release(buffer);
		}
		feed(bytes, frame);
	}

	/** As {@link #feed(DataBuffer, Consumer)}, from an array. */
	public void feed(byte[] bytes, Consumer<ByteBuffer> frame) {
		ByteBuffer input = join(bytes);
		while (input.remaining() >= StreamFrames.LENGTH) {
			int length = input.getInt(input.position());
			if (length < 1 || length > this.maxFrameSize) {
				throw new EntryFrame.MalformedFrameException(
						"frame of " + length + " bytes (the limit is " + this.maxFrameSize + ")");
			}
			if (input.remaining() - StreamFrames.LENGTH < length) {
				break;
			}
			int start = input.position() + StreamFrames.LENGTH;
			frame.accept(input.slice(start, length));
			input.position(start + length);
		}
		this.partial = input.hasRemaining() ? copyOf(input) : ByteBuffer.allocate(0);
	}

	/** Whether the stream ended between frames. */
	public boolean isComplete() {
		return !this.partial.hasRemaining();
	}

	private ByteBuffer join(byte[] bytes) {
		if (!this.partial.hasRemaining()) {
			return ByteBuffer.wrap(bytes);
		}
		ByteBuffer joined = ByteBuffer.allocate(this.partial.remaining() + bytes.length);
		joined.put(this.partial).put(bytes).flip();
		return joined;
	}

	private static ByteBuffer copyOf(ByteBuffer rest) {
		ByteBuffer copy = ByteBuffer.allocate(rest.remaining());
		copy.put(rest).flip();
		return copy;
	}

}
