package io.quorumkv.service.paxos;

import io.quorumkv.storage.Entry;

/**
 * A value an acceptor accepted: the entry to write, and the ballot it was accepted at.
 * The entry keeps its own timestamp when a later ballot completes it.
 */
record Proposal(Ballot ballot, Entry entry) {

	/** The same entry, proposed again at {@code newer}. */
	Proposal at(Ballot newer) {
		return new Proposal(newer, this.entry);
	}

}
