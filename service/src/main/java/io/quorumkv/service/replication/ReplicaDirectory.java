package io.quorumkv.service.replication;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import io.quorumkv.service.cluster.Node;

/**
 * Every node's {@link Replica}, by node: this node's own storage, and a peer replica
 * (with its batcher) made on first use for each peer the ring names, so that nodes added
 * to the ring are reached like the others. A node whose URL changed gets a new one.
 */
final class ReplicaDirectory {

	private final LocalReplica local;

	private final Supplier<Node> self;

	private final Function<Node, PeerReplica> peers;

	private final Map<String, PeerReplica> byId = new ConcurrentHashMap<>();

	ReplicaDirectory(LocalReplica local, Supplier<Node> self, Function<Node, PeerReplica> peers) {
		this.local = local;
		this.self = self;
		this.peers = peers;
	}

	Replica of(Node node) {
		if (node.id().equals(this.self.get().id())) {
			return this.local;
		}
		PeerReplica replica = this.byId.get(node.id());
		if (replica != null && replica.node().url().equals(node.url())) {
			return replica;
		}
		return this.byId.compute(node.id(),
				(id, existing) -> (existing != null && existing.node().url().equals(node.url())) ? existing
						: this.peers.apply(node));
	}

	LocalReplica local() {
		return this.local;
	}

}
