package io.quorumkv.service.paxos;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;

import io.quorumkv.service.peer.EntryFrame;

/**
 * A Paxos ballot: a timestamp of the proposing node's hybrid logical clock, ties broken
 * by the node's id. Two nodes never issue the same ballot, and one node's ballots grow.
 * The value a ballot chooses for a new write is stamped with its {@code micros}.
 *
 * @param micros the coordinator's clock when it began the round
 * @param node the coordinator's id
 */
record Ballot(long micros, String node) implements Comparable<Ballot> {

	/** Below every real ballot: what an acceptor that promised nothing has promised. */
	static final Ballot NONE = new Ballot(Long.MIN_VALUE, "");

	private static final int MAX_NODE = 255;

	private static final Comparator<Ballot> ORDER = Comparator.comparingLong(Ballot::micros)
		.thenComparing(Ballot::node);

	Ballot {
		if (node.getBytes(StandardCharsets.UTF_8).length > MAX_NODE) {
			throw new IllegalArgumentException("a node id over " + MAX_NODE + " bytes");
		}
	}

	@Override
	public int compareTo(Ballot other) {
		return ORDER.compare(this, other);
	}

	boolean isAbove(Ballot other) {
		return compareTo(other) > 0;
	}

	static Ballot max(Ballot a, Ballot b) {
		return a.isAbove(b) ? a : b;
	}

	int size() {
		return 8 + 1 + this.node.getBytes(StandardCharsets.UTF_8).length;
	}

	void put(ByteBuffer out) {
		byte[] id = this.node.getBytes(StandardCharsets.UTF_8);
		out.putLong(this.micros).put((byte) id.length).put(id);
	}

	static Ballot read(ByteBuffer in) {
		long micros = in.getLong();
		int length = in.get() & 0xFF;
		if (length > in.remaining()) {
			throw new EntryFrame.MalformedFrameException("ballot node id of " + length + " bytes");
		}
		byte[] id = new byte[length];
		in.get(id);
		return new Ballot(micros, new String(id, StandardCharsets.UTF_8));
	}

	@Override
	public String toString() {
		return this.micros + ":" + this.node;
	}

}
