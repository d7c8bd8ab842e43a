package io.quorumkv.service.paxos;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The Paxos messages, as the payloads of replica-stream calls (the transport reads none
 * of them). Big-endian.
 *
 * <pre>
 * request := u8 verb | ballot | body
 *   PREPARE (1): u32 keyLength | key
 *   PROPOSE (2): entry (EntryFrame)
 *   COMMIT (3):  u32 keyLength | key | i64 timestamp   (the committed entry's)
 * ballot  := i64 micros | u8 idLength | utf8 node id
 * promise := u8 ok | ballot promised | u8 flags | [ballot | entry]   (flags &amp; 1: accepted)
 *                                                | [entry]            (flags &amp; 2: current)
 *                                                | [ballot]           (flags &amp; 8: commit)
 *            flags &amp; 4: the current entry is a version only (its value left out)
 * vote    := u8 ok | ballot promised
 * recorded := u8 recorded   (the answer to a commit)
 * </pre>
 *
 * A promise without a commit (flags &amp; 8 clear) reports none ({@link Ballot#NONE}).
 *
 * Every length is bounded by the node's largest key and value; anything else is a
 * {@link EntryFrame.MalformedFrameException}.
 */
final class Messages {

	static final byte PREPARE = 1;

	static final byte PROPOSE = 2;

	static final byte COMMIT = 3;

	private static final int ACCEPTED = 1;

	private static final int CURRENT = 2;

	private static final int VERSION_ONLY = 4;

	private static final int COMMITTED = 8;

	private Messages() {
	}

	/**
	 * A request as the acceptor reads it: only a proposal has an entry, only a commit a
	 * timestamp (the committed entry's).
	 */
	record Request(byte verb, Ballot ballot, byte[] key, @Nullable Entry entry, long timestamp) {
	}

	/**
	 * An acceptor's answer to a prepare.
	 *
	 * @param ok whether it promised the ballot
	 * @param promised the highest ballot it has promised (the asked one when ok)
	 * @param accepted the last proposal it accepted that its storage does not hold yet
	 * @param current its storage's entry of the key (only when ok)
	 * @param versionOnly whether {@code current} is its version only, its value left out
	 * (sent so beside an accepted proposal, to keep the answer within a frame)
	 * @param commit the ballot of the most recent commit its storage holds (only when ok)
	 */
	record Promise(boolean ok, Ballot promised, @Nullable Proposal accepted, @Nullable Entry current,
			boolean versionOnly, Ballot commit) {

		/** A refusal: the higher ballot promised. */
		static Promise refused(Ballot promised) {
			return new Promise(false, promised, null, null, false, Ballot.NONE);
		}

	}

	/** An acceptor's answer to a proposal: accepted, or the higher ballot it promised. */
	record Vote(boolean ok, Ballot promised) {
	}

	static byte[] prepare(Ballot ballot, byte[] key) {
		ByteBuffer out = ByteBuffer.allocate(1 + ballot.size() + 4 + key.length);
		out.put(PREPARE);
		ballot.put(out);
		out.putInt(key.length).put(key);
		return out.array();
	}

	static byte[] propose(Proposal proposal) {
		ByteBuffer out = ByteBuffer.allocate(1 + proposal.ballot().size() + EntryFrame.size(proposal.entry()));
		out.put(PROPOSE);
		proposal.ballot().put(out);
		EntryFrame.put(out, proposal.entry());
		return out.array();
	}

	static byte[] commit(Ballot ballot, Entry entry) {
		byte[] key = entry.key();
		ByteBuffer out = ByteBuffer.allocate(1 + ballot.size() + 4 + key.length + 8);
		out.put(COMMIT);
		ballot.put(out);
		out.putInt(key.length).put(key).putLong(entry.timestamp());
		return out.array();
	}

	static Request readRequest(byte[] payload, int maxKeySize, int maxValueSize) {
		ByteBuffer in = ByteBuffer.wrap(payload);
		try {
			byte verb = in.get();
			Ballot ballot = Ballot.read(in);
			Request request = switch (verb) {
				case PREPARE -> new Request(verb, ballot, readKey(in, maxKeySize, 0), null, 0);
				case PROPOSE -> {
					Entry entry = EntryFrame.read(in, maxKeySize, maxValueSize);
					yield new Request(verb, ballot, entry.key(), entry, 0);
				}
				case COMMIT -> new Request(verb, ballot, readKey(in, maxKeySize, 8), null, in.getLong());
				default -> throw new EntryFrame.MalformedFrameException("unknown Paxos verb " + verb);
			};
			requireEnd(in);
			return request;
		}
		catch (BufferUnderflowException ex) {
			throw new EntryFrame.MalformedFrameException("Paxos request ends inside a field");
		}
	}

	/** A key that {@code after} bytes follow to the end. */
	private static byte[] readKey(ByteBuffer in, int maxKeySize, int after) {
		int length = in.getInt();
		if (length < 1 || length > maxKeySize || length != in.remaining() - after) {
			throw new EntryFrame.MalformedFrameException("a Paxos request of a key of " + length + " bytes");
		}
		byte[] key = new byte[length];
		in.get(key);
		return key;
	}

	static byte[] promise(Promise promise) {
		Entry current = promise.current();
		Proposal accepted = promise.accepted();
		int size = 1 + promise.promised().size() + 1;
		int flags = 0;
		if (accepted != null) {
			flags |= ACCEPTED;
			size += accepted.ballot().size() + EntryFrame.size(accepted.entry());
		}
		if (current != null) {
			flags |= CURRENT | (promise.versionOnly() ? VERSION_ONLY : 0);
			size += EntryFrame.size(current);
		}
		if (promise.ok()) {
			flags |= COMMITTED;
			size += promise.commit().size();
		}
		ByteBuffer out = ByteBuffer.allocate(size);
		out.put((byte) (promise.ok() ? 1 : 0));
		promise.promised().put(out);
		out.put((byte) flags);
		if (accepted != null) {
			accepted.ballot().put(out);
			EntryFrame.put(out, accepted.entry());
		}
		if (current != null) {
			EntryFrame.put(out, current);
		}
		if (promise.ok()) {
			promise.commit().put(out);
		}
		return out.array();
	}

	static Promise readPromise(byte[] payload, int maxKeySize, int maxValueSize) {
		ByteBuffer in = ByteBuffer.wrap(payload);
		try {
			boolean ok = in.get() != 0;
			Ballot promised = Ballot.read(in);
			int flags = in.get();
			Proposal accepted = null;
			if ((flags & ACCEPTED) != 0) {
				Ballot ballot = Ballot.read(in);
				accepted = new Proposal(ballot, EntryFrame.read(in, maxKeySize, maxValueSize));
			}
			Entry current = ((flags & CURRENT) != 0) ? EntryFrame.read(in, maxKeySize, maxValueSize) : null;
			Ballot commit = ((flags & COMMITTED) != 0) ? Ballot.read(in) : Ballot.NONE;
			requireEnd(in);
			return new Promise(ok, promised, accepted, current, (flags & VERSION_ONLY) != 0, commit);
		}
		catch (BufferUnderflowException ex) {
			throw new EntryFrame.MalformedFrameException("promise ends inside a field");
		}
	}

	static byte[] vote(Vote vote) {
		ByteBuffer out = ByteBuffer.allocate(1 + vote.promised().size());
		out.put((byte) (vote.ok() ? 1 : 0));
		vote.promised().put(out);
		return out.array();
	}

	static Vote readVote(byte[] payload) {
		ByteBuffer in = ByteBuffer.wrap(payload);
		try {
			boolean ok = in.get() != 0;
			Ballot promised = Ballot.read(in);
			requireEnd(in);
			return new Vote(ok, promised);
		}
		catch (BufferUnderflowException ex) {
			throw new EntryFrame.MalformedFrameException("vote ends inside a field");
		}
	}

	static byte[] recorded(boolean recorded) {
		return new byte[] { (byte) (recorded ? 1 : 0) };
	}

	static boolean readRecorded(byte[] payload) {
		if (payload.length != 1) {
			throw new EntryFrame.MalformedFrameException("an answer to a commit of " + payload.length + " bytes");
		}
		return payload[0] != 0;
	}

	private static void requireEnd(ByteBuffer in) {
		if (in.hasRemaining()) {
			throw new EntryFrame.MalformedFrameException(in.remaining() + " bytes after a Paxos message");
		}
	}

}
