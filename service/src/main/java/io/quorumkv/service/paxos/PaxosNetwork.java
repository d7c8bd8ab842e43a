package io.quorumkv.service.paxos;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.paxos.Messages.Vote;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.replication.ReplicationService;
import io.quorumkv.service.replication.Replicas;
import io.quorumkv.storage.Entry;
import reactor.core.publisher.Mono;

/**
 * A node's {@link Network}: its own acceptor called directly, the others' through the
 * replica streams of the one peer transport (a call of {@link AcceptorService#SERVICE}),
 * and the committed entries through the coordinator's ordinary write path (so hints, read
 * repair, repair and streaming carry them like any other).
 */
final class PaxosNetwork implements Network {

	private final ClusterState cluster;

	private final Acceptor local;

	private final PeerClient peers;

	private final ReplicationService replication;

	private final int maxKeySize;

	private final int maxValueSize;

	PaxosNetwork(ClusterState cluster, Acceptor local, PeerClient peers, ReplicationService replication, int maxKeySize,
			int maxValueSize) {
		this.cluster = cluster;
		this.local = local;
		this.peers = peers;
		this.replication = replication;
		this.maxKeySize = maxKeySize;
		this.maxValueSize = maxValueSize;
	}

	/**
	 * The key's owners under the ring served now: its old and its new owners while it
	 * moves, each group needing its own majority ({@link Tally}).
	 */
	@Override
	public Targets acceptors(byte[] key) {
		RingLayout layout = this.cluster.servingLayout();
		return layout.writes(key, layout.replicationFactor());
	}

	@Override
	public Mono<Promise> prepare(Node acceptor, Ballot ballot, byte[] key) {
		if (acceptor.id().equals(this.cluster.self().id())) {
			return this.local.prepare(ballot, key);
		}
		return this.peers.streams()
			.call(acceptor, AcceptorService.SERVICE, Messages.prepare(ballot, key))
			.map((reply) -> Messages.readPromise(reply, this.maxKeySize, this.maxValueSize));
	}

	@Override
	public Mono<Vote> propose(Node acceptor, Proposal proposal) {
		if (acceptor.id().equals(this.cluster.self().id())) {
			return this.local.propose(proposal);
		}
		return this.peers.streams()
			.call(acceptor, AcceptorService.SERVICE, Messages.propose(proposal))
			.map(Messages::readVote);
	}

	@Override
	public Mono<Boolean> commit(Node acceptor, Ballot ballot, Entry entry) {
		if (acceptor.id().equals(this.cluster.self().id())) {
			return this.local.commit(ballot, entry.key(), entry.timestamp());
		}
		return this.peers.streams()
			.call(acceptor, AcceptorService.SERVICE, Messages.commit(ballot, entry))
			.map(Messages::readRecorded);
	}

	@Override
	public Mono<Void> store(Entry entry) {
		int replicationFactor = this.cluster.servingLayout().replicationFactor();
		return this.replication.write(entry, Replicas.quorum(replicationFactor));
	}

}
