package io.quorumkv.service.paxos;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.paxos.Messages.Vote;
import io.quorumkv.storage.Entry;
import reactor.core.publisher.Mono;

/**
 * What a {@link Proposer} reaches the acceptors and the replicas with: on a node, the
 * replica streams and the ordinary write path ({@link PaxosNetwork}); in a test, a
 * simulated network that loses, delays and duplicates.
 */
interface Network {

	/** The key's acceptors now: its owners, old and new while it moves. */
	Targets acceptors(byte[] key);

	Mono<Promise> prepare(Node acceptor, Ballot ballot, byte[] key);

	Mono<Vote> propose(Node acceptor, Proposal proposal);

	/**
	 * Writes an entry (a chosen one, or one a serial read found on a minority) as an
	 * ordinary versioned entry to the key's owners, confirmed by a majority of them (of
	 * each group while the key moves).
	 */
	Mono<Void> store(Entry entry);

	/**
	 * Tells an acceptor that {@code entry}, stored at a majority, was chosen at
	 * {@code ballot}; whether it recorded it (its storage holds the entry).
	 */
	Mono<Boolean> commit(Node acceptor, Ballot ballot, Entry entry);

}
