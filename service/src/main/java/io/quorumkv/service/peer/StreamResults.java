package io.quorumkv.service.peer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.service.peer.StreamFrames.Result;

import static io.quorumkv.service.peer.StreamFrames.ABSENT;
import static io.quorumkv.service.peer.StreamFrames.CLOCK_SKEW;
import static io.quorumkv.service.peer.StreamFrames.EXPIRED;
import static io.quorumkv.service.peer.StreamFrames.FAILED;
import static io.quorumkv.service.peer.StreamFrames.FOUND;
import static io.quorumkv.service.peer.StreamFrames.KEPT;
import static io.quorumkv.service.peer.StreamFrames.PONG;
import static io.quorumkv.service.peer.StreamFrames.REPLY;
import static io.quorumkv.service.peer.StreamFrames.STALE_RING;

/**
 * The result frames of a replica stream's answer ({@link StreamFrames} gives the format):
 * written by the replica, read by the stream that sent the operations.
 */
public final class StreamResults {

	/** id and type. */
	private static final int RESULT_HEAD = 4 + 1;

	private static final int MAX_REASON = 512;

	private StreamResults() {
	}

	/** Bytes of a result frame, its length prefix included. */
	static int size(Result result) {
		return StreamFrames.LENGTH + RESULT_HEAD + switch (result.type()) {
			case FOUND -> EntryFrame.size(StreamFrames.requireEntry(result.entry()));
			case STALE_RING, PONG -> 8;
			case FAILED, CLOCK_SKEW -> 2 + reason(result).length;
			case REPLY -> 4 + result.payload().length;
			default -> 0;
		};
	}

	private static void put(ByteBuffer out, Result result) {
		out.putInt(size(result) - StreamFrames.LENGTH).putInt(result.id()).put(result.type());
		switch (result.type()) {
			case FOUND -> EntryFrame.put(out, StreamFrames.requireEntry(result.entry()));
			case STALE_RING, PONG -> out.putLong(result.number());
			case FAILED, CLOCK_SKEW -> {
				byte[] reason = reason(result);
				out.putShort((short) reason.length).put(reason);
			}
			case REPLY -> out.putInt(result.payload().length).put(result.payload());
			default -> {
			}
		}
	}

	/** The results in one buffer, ready to send. */
	public static ByteBuffer encode(List<Result> results) {
		int size = 0;
		for (Result result : results) {
			size += size(result);
		}
		ByteBuffer out = ByteBuffer.allocate(size);
		for (Result result : results) {
			put(out, result);
		}
		return out.flip();
	}

	/**
	 * The result of one frame (its length prefix already read).
	 * @throws EntryFrame.MalformedFrameException when it is not a well-formed result
	 */
	public static Result read(ByteBuffer in, int maxKeySize, int maxValueSize) {
		try {
			int id = in.getInt();
			byte type = in.get();
			Result result = switch (type) {
				case KEPT, ABSENT, EXPIRED -> new Result(id, type, null, 0, null);
				case FOUND -> new Result(id, type, EntryFrame.read(in, maxKeySize, maxValueSize), 0, null);
				case STALE_RING, PONG -> new Result(id, type, null, in.getLong(), null);
				case FAILED, CLOCK_SKEW -> {
					int length = in.getShort() & 0xFFFF;
					if (length > in.remaining()) {
						throw new EntryFrame.MalformedFrameException("reason of " + length + " bytes");
					}
					byte[] reason = new byte[length];
					in.get(reason);
					yield new Result(id, type, null, 0, new String(reason, StandardCharsets.UTF_8));
				}
				case REPLY -> {
					int length = in.getInt();
					if (length < 0 || length != in.remaining()) {
						throw new EntryFrame.MalformedFrameException("reply of " + length + " bytes");
					}
					byte[] payload = new byte[length];
					in.get(payload);
					yield Result.reply(id, payload);
				}
				default -> throw new EntryFrame.MalformedFrameException("unknown result type " + type);
			};
			if (in.hasRemaining()) {
				throw new EntryFrame.MalformedFrameException(in.remaining() + " bytes after a result");
			}
			return result;
		}
		catch (java.nio.BufferUnderflowException ex) {
			throw new EntryFrame.MalformedFrameException("result frame ends inside a field");
		}
	}

	/**
	 * Every result of a whole answer body.
	 * @throws EntryFrame.MalformedFrameException when it is not a sequence of whole,
	 * well-formed results
	 */
	public static List<Result> decodeAll(byte[] body, int maxFrameSize) {
		List<Result> results = new ArrayList<>();
		FrameAssembler frames = new FrameAssembler(maxFrameSize);
		frames.feed(body, (frame) -> results.add(read(frame, maxFrameSize, maxFrameSize)));
		if (!frames.isComplete()) {
			throw new EntryFrame.MalformedFrameException("the answer ends inside a frame");
		}
		return results;
	}

	private static byte[] reason(Result result) {
		String reason = (result.reason() != null) ? result.reason() : "";
		byte[] bytes = reason.getBytes(StandardCharsets.UTF_8);
		return (bytes.length <= MAX_REASON) ? bytes : Arrays.copyOf(bytes, MAX_REASON);
	}

}
