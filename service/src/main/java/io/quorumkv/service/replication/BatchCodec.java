package io.quorumkv.service.replication;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The binary body of {@code POST /internal/v0/batch} and of its answer: many replica
 * operations in one call, answered in order. Big-endian throughout.
 *
 * <pre>
 * request  := op*            op := 0x01 u32 keyLength key          (get)
 *                                | 0x02 frame                      (upsert, {@link EntryFrame})
 * answer   := result*        result := 0x00                        (upsert kept)
 *                                    | 0x01 frame                  (get: the replica's entry)
 *                                    | 0x02                        (get: never written here)
 *                                    | 0x03 u16 length utf8        (this operation failed)
 *                                    | 0x04                        (get: answer full, ask alone)
 * </pre>
 *
 * An answer stays within a size cap: a get whose entry would not fit any more is answered
 * {@code 0x04}, and the caller asks for that key in a call of its own (one value always
 * fits).
 *
 * Every decoder checks lengths against the bytes it was given and fails with
 * {@link MalformedBatchException} instead of reading past them.
 */
public final class BatchCodec {

	static final byte GET = 0x01;

	static final byte UPSERT = 0x02;

	static final byte KEPT = 0x00;

	static final byte FOUND = 0x01;

	static final byte ABSENT = 0x02;

	static final byte FAILED = 0x03;

	static final byte RETRY_ALONE = 0x04;

	private static final int MAX_MESSAGE = 512;

	private BatchCodec() {
	}

	/** One operation of a batch: a get of {@code key}, or an upsert of {@code entry}. */
	public record Operation(byte[] key, @Nullable Entry entry) {

		public static Operation get(byte[] key) {
			return new Operation(key, null);
		}

		public static Operation upsert(Entry entry) {
			return new Operation(entry.key(), entry);
		}

		public boolean isGet() {
			return this.entry == null;
		}

		/** Bytes this operation takes in a request body. */
		public int encodedSize() {
			return 1 + ((this.entry != null) ? frameSize(this.entry) : 4 + this.key.length);
		}

	}

	/**
	 * The answer to one operation: {@link #KEPT} for an upsert, {@link #found} with the
	 * replica's entry (null when it never saw the key) for a get, or {@link #failed} when
	 * the replica could not do it.
	 */
	public record Result(byte type, @Nullable Entry entry, @Nullable String failure) {

		public static final Result KEPT = new Result(BatchCodec.KEPT, null, null);

		public static final Result ABSENT = new Result(BatchCodec.ABSENT, null, null);

		public static final Result RETRY_ALONE = new Result(BatchCodec.RETRY_ALONE, null, null);

		public static Result found(@Nullable Entry entry) {
			return (entry != null) ? new Result(FOUND, entry, null) : ABSENT;
		}

		public static Result failed(String failure) {
			return new Result(FAILED, null, failure);
		}

		public boolean isFailure() {
			return this.type == FAILED;
		}

		/** A get whose entry did not fit the answer: ask for it in a call of its own. */
		public boolean isRetryAlone() {
			return this.type == BatchCodec.RETRY_ALONE;
		}

		/** Bytes this result takes in an answer body (a failure's message aside). */
		public int encodedSize() {
			return 1 + ((this.entry != null) ? frameSize(this.entry) : 0);
		}

	}

	/** The request body of {@code operations}. */
	public static byte[] encodeRequest(List<Operation> operations) {
		int size = 0;
		for (Operation operation : operations) {
			size += operation.encodedSize();
		}
		ByteBuffer out = ByteBuffer.allocate(size);
		for (Operation operation : operations) {
			if (operation.entry() != null) {
				out.put(UPSERT);
				putFrame(out, operation.entry());
			}
			else {
				out.put(GET).putInt(operation.key().length).put(operation.key());
			}
		}
		return out.array();
	}

	/** The operations of a request body; keys longer than {@code maxKeySize} fail it. */
	public static List<Operation> decodeRequest(byte[] body, int maxKeySize) {
		ByteBuffer in = ByteBuffer.wrap(body);
		List<Operation> operations = new ArrayList<>();
		try {
			while (in.hasRemaining()) {
				byte type = in.get();
				switch (type) {
					case GET -> operations.add(Operation.get(key(in, maxKeySize)));
					case UPSERT -> operations.add(Operation.upsert(frame(in, maxKeySize)));
					default -> throw new MalformedBatchException("unknown operation " + type);
				}
			}
		}
		catch (BufferUnderflowException ex) {
			throw new MalformedBatchException("operation " + operations.size() + " ends early");
		}
		catch (EntryFrame.MalformedFrameException ex) {
			throw new MalformedBatchException("operation " + operations.size() + ": " + ex.getMessage());
		}
		return operations;
	}

	/** The answer body of {@code results}, in the order of the request's operations. */
	public static byte[] encodeResponse(List<Result> results) {
		int size = 0;
		List<byte @Nullable []> messages = new ArrayList<>(results.size());
		for (Result result : results) {
			byte[] message = null;
			if (result.failure() != null) {
				message = truncated(result.failure());
				size += 3 + message.length;
			}
			else {
				size += 1 + ((result.entry() != null) ? frameSize(result.entry()) : 0);
			}
			messages.add(message);
		}
		ByteBuffer out = ByteBuffer.allocate(size);
		for (int i = 0; i < results.size(); i++) {
			Result result = results.get(i);
			byte[] message = messages.get(i);
			if (message != null) {
				out.put(FAILED).putShort((short) message.length).put(message);
			}
			else if (result.entry() != null) {
				out.put(FOUND);
				putFrame(out, result.entry());
			}
			else {
				out.put(result.type());
			}
		}
		return out.array();
	}

	/**
	 * The results of an answer body for {@code operations}: one per operation, or
	 * {@link MalformedBatchException} when the body does not hold exactly that.
	 */
	public static List<Result> decodeResponse(byte[] body, List<Operation> operations, int maxKeySize) {
		ByteBuffer in = ByteBuffer.wrap(body);
		List<Result> results = new ArrayList<>(operations.size());
		try {
			for (Operation operation : operations) {
				if (!in.hasRemaining()) {
					throw new MalformedBatchException(
							"answer holds " + results.size() + " results for " + operations.size() + " operations");
				}
				byte type = in.get();
				Result result = switch (type) {
					case KEPT -> Result.KEPT;
					case FOUND -> Result.found(frame(in, maxKeySize));
					case ABSENT -> Result.ABSENT;
					case RETRY_ALONE -> Result.RETRY_ALONE;
					case FAILED -> Result.failed(message(in));
					default -> throw new MalformedBatchException("unknown result " + type);
				};
				if (!result.isFailure() && operation.isGet() == (type == KEPT)) {
					// KEPT answers upserts only; FOUND, ABSENT and RETRY_ALONE answer
					// gets only.
					throw new MalformedBatchException(
							"result " + type + " does not answer operation " + results.size());
				}
				if (result.entry() != null && !Arrays.equals(result.entry().key(), operation.key())) {
					throw new MalformedBatchException("result " + results.size() + " is for another key");
				}
				results.add(result);
			}
		}
		catch (BufferUnderflowException ex) {
			throw new MalformedBatchException("result " + results.size() + " ends early");
		}
		catch (EntryFrame.MalformedFrameException ex) {
			throw new MalformedBatchException("result " + results.size() + ": " + ex.getMessage());
		}
		if (in.hasRemaining()) {
			throw new MalformedBatchException(in.remaining() + " bytes after the last result");
		}
		return results;
	}

	/** Bytes of {@code entry} as a frame ({@link EntryFrame}). */
	public static int frameSize(Entry entry) {
		return EntryFrame.size(entry);
	}

	private static void putFrame(ByteBuffer out, Entry entry) {
		EntryFrame.put(out, entry);
	}

	private static byte[] key(ByteBuffer in, int maxKeySize) {
		int length = in.getInt();
		if (length < 1 || length > maxKeySize) {
			throw new MalformedBatchException("key length " + length + " outside 1.." + maxKeySize);
		}
		byte[] key = new byte[length];
		in.get(key);
		return key;
	}

	/** A frame of a body that is all there: a frame running past it is malformed. */
	private static Entry frame(ByteBuffer in, int maxKeySize) {
		return EntryFrame.read(in, maxKeySize, in.remaining());
	}

	private static String message(ByteBuffer in) {
		int length = Short.toUnsignedInt(in.getShort());
		byte[] bytes = new byte[length];
		in.get(bytes);
		return new String(bytes, StandardCharsets.UTF_8);
	}

	private static byte[] truncated(String message) {
		byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
		if (bytes.length <= MAX_MESSAGE) {
			return bytes;
		}
		return new String(bytes, 0, MAX_MESSAGE, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
	}

	/** A batch body that does not follow the format. */
	public static final class MalformedBatchException extends RuntimeException {

		MalformedBatchException(String message) {
			super("malformed batch: " + message, null, false, false);
		}

	}

}
