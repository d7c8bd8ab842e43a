package io.quorumkv.service.peer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The frames of a replica stream ({@code POST /internal/v0/stream}): the request body is
 * a sequence of operation frames, the answer body a sequence of result frames, each
 * matched to its operation by id, in any order. Big-endian.
 *
 * <pre>
 * operation := u32 length | u32 id | u8 kind | i64 epoch | u32 budgetMillis | body
 *   kind GET    (1): body = u32 keyLength | key
 *   kind UPSERT (2): body = entry ({@link EntryFrame})
 *   kind PING   (3): body = empty (budgetMillis 0)
 *   kind CALL   (4): body = u8 service | u32 length | payload (a feature's message,
 *                     opaque here; the replica hands it to the feature's
 *                     {@link StreamService})
 * result    := u32 length | u32 id | u8 type | body
 *   KEPT       (0): upsert kept; body empty
 *   FOUND      (1): the replica's entry ({@link EntryFrame})
 *   ABSENT     (2): the replica never saw the key
 *   FAILED     (3): u16 length | utf8 reason
 *   STALE_RING (4): i64 the replica's epoch (the operation's is older)
 *   CLOCK_SKEW (5): u16 length | utf8 reason (the timestamp is too far ahead)
 *   EXPIRED    (6): the budget ran out before the replica could start it; not applied
 *   PONG       (7): i64 the replica's wall clock in microseconds
 *   REPLY      (8): u32 length | payload (the feature's answer to a CALL)
 * </pre>
 *
 * {@code length} counts the bytes after itself and is bounded by the stream's largest
 * frame; {@code epoch} is the sender's ring epoch when it sent the operation (0: none);
 * {@code budgetMillis} is what was left of the operation's deadline when it was sent, and
 * the replica does not start an operation past it.
 */
public final class StreamFrames {

	public static final byte GET = 1;

	public static final byte UPSERT = 2;

	public static final byte PING = 3;

	public static final byte CALL = 4;

	public static final byte KEPT = 0;

	public static final byte FOUND = 1;

	public static final byte ABSENT = 2;

	public static final byte FAILED = 3;

	public static final byte STALE_RING = 4;

	public static final byte CLOCK_SKEW = 5;

	public static final byte EXPIRED = 6;

	public static final byte PONG = 7;

	public static final byte REPLY = 8;

	/** The length prefix. */
	static final int LENGTH = 4;

	/** id, kind, epoch and budget. */
	private static final int OPERATION_HEAD = 4 + 1 + 8 + 4;

	private StreamFrames() {
	}

	/**
	 * One operation as the replica reads it.
	 *
	 * @param id the sender's id of the operation
	 * @param kind {@link #GET}, {@link #UPSERT}, {@link #PING} or {@link #CALL}
	 * @param epoch the sender's ring epoch
	 * @param budgetMillis what was left of its deadline when sent
	 * @param key the key (of a get or an upsert; empty for a ping or a call)
	 * @param entry the entry of an upsert
	 * @param service the feature a call is for (0 for other kinds)
	 * @param payload the message of a call (empty for other kinds)
	 */
	public record Operation(int id, byte kind, long epoch, int budgetMillis, byte[] key, @Nullable Entry entry,
			byte service, byte[] payload) {

		public static final byte[] NO_KEY = new byte[0];

		public Operation(int id, byte kind, long epoch, int budgetMillis, byte[] key, @Nullable Entry entry) {
			this(id, kind, epoch, budgetMillis, key, entry, (byte) 0, NO_KEY);
		}

		@Override
		public String toString() {
			return "Operation[id=" + this.id + ", kind=" + this.kind + ", epoch=" + this.epoch + ", key="
					+ Arrays.toString(this.key) + "]";
		}

	}

	/**
	 * One result as the replica writes it.
	 *
	 * @param id the operation's id
	 * @param type one of the result types
	 * @param entry the entry of {@link #FOUND}
	 * @param number the epoch of {@link #STALE_RING}, the clock of {@link #PONG}
	 * @param reason the reason of {@link #FAILED} and {@link #CLOCK_SKEW}
	 * @param payload the feature's answer of {@link #REPLY} (empty for other types)
	 */
	public record Result(int id, byte type, @Nullable Entry entry, long number, @Nullable String reason,
			byte[] payload) {

		public Result(int id, byte type, @Nullable Entry entry, long number, @Nullable String reason) {
			this(id, type, entry, number, reason, Operation.NO_KEY);
		}

		public static Result reply(int id, byte[] payload) {
			return new Result(id, REPLY, null, 0, null, payload);
		}

		public static Result kept(int id) {
			return new Result(id, KEPT, null, 0, null);
		}

		public static Result found(int id, @Nullable Entry entry) {
			return (entry != null) ? new Result(id, FOUND, entry, 0, null) : new Result(id, ABSENT, null, 0, null);
		}

		public static Result failed(int id, String reason) {
			return new Result(id, FAILED, null, 0, reason);
		}

		public static Result clockSkew(int id, String reason) {
			return new Result(id, CLOCK_SKEW, null, 0, reason);
		}

		public static Result staleRing(int id, long epoch) {
			return new Result(id, STALE_RING, null, epoch, null);
		}

		public static Result expired(int id) {
			return new Result(id, EXPIRED, null, 0, null);
		}

		public static Result pong(int id, long wallMicros) {
			return new Result(id, PONG, null, wallMicros, null);
		}

	}

	/** Bytes of an operation frame, its length prefix included. */
	static int operationSize(byte kind, byte[] key, @Nullable Entry entry) {
		return operationSize(kind, key, entry, Operation.NO_KEY);
	}

	/** Bytes of an operation frame, a call's payload included. */
	static int operationSize(byte kind, byte[] key, @Nullable Entry entry, byte[] payload) {
		int body = switch (kind) {
			case GET -> 4 + key.length;
			case UPSERT -> EntryFrame.size(requireEntry(entry));
			case CALL -> 1 + 4 + payload.length;
			default -> 0;
		};
		return LENGTH + OPERATION_HEAD + body;
	}

	static void putOperation(ByteBuffer out, int id, byte kind, long epoch, int budgetMillis, byte[] key,
			@Nullable Entry entry) {
		putOperation(out, id, kind, epoch, budgetMillis, key, entry, (byte) 0, Operation.NO_KEY);
	}

	static void putOperation(ByteBuffer out, int id, byte kind, long epoch, int budgetMillis, byte[] key,
			@Nullable Entry entry, byte service, byte[] payload) {
		int size = operationSize(kind, key, entry, payload);
		out.putInt(size - LENGTH).putInt(id).put(kind).putLong(epoch).putInt(budgetMillis);
		if (kind == GET) {
			out.putInt(key.length).put(key);
		}
		else if (kind == UPSERT) {
			EntryFrame.put(out, requireEntry(entry));
		}
		else if (kind == CALL) {
			out.put(service).putInt(payload.length).put(payload);
		}
	}

	/**
	 * The operation of one frame (its length prefix already read: {@code in} holds
	 * exactly its bytes).
	 * @throws EntryFrame.MalformedFrameException when it is not a well-formed operation
	 */
	public static Operation readOperation(ByteBuffer in, int maxKeySize, int maxValueSize) {
		try {
			int id = in.getInt();
			byte kind = in.get();
			long epoch = in.getLong();
			int budget = in.getInt();
			Operation operation = switch (kind) {
				case GET -> {
					int length = in.getInt();
					if (length < 1 || length > maxKeySize || length != in.remaining()) {
						throw new EntryFrame.MalformedFrameException("get of a key of " + length + " bytes");
					}
					byte[] key = new byte[length];
					in.get(key);
					yield new Operation(id, kind, epoch, budget, key, null);
				}
				case UPSERT -> {
					Entry entry = EntryFrame.read(in, maxKeySize, maxValueSize);
					yield new Operation(id, kind, epoch, budget, entry.key(), entry);
				}
				case PING -> new Operation(id, kind, epoch, budget, Operation.NO_KEY, null);
				case CALL -> {
					byte service = in.get();
					int length = in.getInt();
					if (length < 0 || length != in.remaining()) {
						throw new EntryFrame.MalformedFrameException("call of " + length + " bytes");
					}
					byte[] payload = new byte[length];
					in.get(payload);
					yield new Operation(id, kind, epoch, budget, Operation.NO_KEY, null, service, payload);
				}
				default -> throw new EntryFrame.MalformedFrameException("unknown operation kind " + kind);
			};
			if (in.hasRemaining()) {
				throw new EntryFrame.MalformedFrameException(in.remaining() + " bytes after an operation");
			}
			return operation;
		}
		catch (java.nio.BufferUnderflowException ex) {
			throw new EntryFrame.MalformedFrameException("operation frame ends inside a field");
		}
	}

	/**
	 * One operation frame, length prefix included, in an array of its own (for tools and
	 * tests that speak to a stream one call at a time).
	 */
	public static byte[] encodeOperation(int id, byte kind, long epoch, int budgetMillis, byte[] key,
			@Nullable Entry entry) {
		ByteBuffer out = ByteBuffer.allocate(operationSize(kind, key, entry));
		putOperation(out, id, kind, epoch, budgetMillis, key, entry);
		return out.array();
	}

	static Entry requireEntry(@Nullable Entry entry) {
		if (entry == null) {
			throw new IllegalArgumentException("an upsert or a found result needs its entry");
		}
		return entry;
	}

}
