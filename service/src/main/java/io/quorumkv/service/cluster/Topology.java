package io.quorumkv.service.cluster;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The cluster as this node sees it: every node, which one is this node, the shared secret
 * of the internal API and the replication factor. Validated at start: this node is in the
 * list, no node is listed twice, a cluster of more than one node has a secret, and the
 * replication factor is between 1 and the number of nodes.
 *
 * @param nodes every node, this one included, in configuration order
 * @param self this node
 * @param secret the internal API's shared secret; null only for a single node
 * @param replicationFactor how many nodes hold each key: the first ones of its placement
 * order
 */
public record Topology(List<Node> nodes, Node self, @Nullable String secret, int replicationFactor) {

	public Topology {
		nodes = List.copyOf(nodes);
		Objects.requireNonNull(self, "self");
		Set<String> seen = new HashSet<>();
		for (Node node : nodes) {
			if (!seen.add(node.id())) {
				throw new IllegalArgumentException("quorumkv.cluster.nodes lists " + node + " more than once");
			}
		}
		if (nodes.size() > 1 && (secret == null || secret.isBlank())) {
			throw new IllegalArgumentException(
					"quorumkv.cluster.secret is required for a cluster of " + nodes.size() + " nodes");
		}
		if (replicationFactor < 1 || replicationFactor > nodes.size()) {
			throw new IllegalArgumentException("quorumkv.cluster.replication-factor must be between 1 and the "
					+ nodes.size() + " nodes of the cluster, was " + replicationFactor);
		}
	}

	/**
	 * Builds the topology from configuration, with every node as replica of every key.
	 * @see #of(List, URI, String, int, Integer)
	 */
	public static Topology of(List<URI> configuredNodes, @Nullable URI configuredSelf, @Nullable String secret,
			int port) {
		return of(configuredNodes, configuredSelf, secret, port, null);
	}

	/**
	 * Builds the topology from configuration.
	 * @param configuredNodes {@code quorumkv.cluster.nodes}; empty means a single node
	 * @param configuredSelf {@code quorumkv.cluster.self}; null means
	 * {@code http://127.0.0.1:<port>}
	 * @param secret {@code quorumkv.cluster.secret}
	 * @param port {@code server.port}
	 * @param replicationFactor {@code quorumkv.cluster.replication-factor}; null means
	 * the number of nodes
	 */
	public static Topology of(List<URI> configuredNodes, @Nullable URI configuredSelf, @Nullable String secret,
			int port, @Nullable Integer replicationFactor) {
		Node self = (configuredSelf != null) ? new Node(configuredSelf) : Node.of("http://127.0.0.1:" + port);
		List<Node> nodes = new ArrayList<>();
		configuredNodes.forEach((url) -> nodes.add(new Node(url)));
		if (nodes.isEmpty()) {
			nodes.add(self);
		}
		return new Topology(nodes, self, secret, (replicationFactor != null) ? replicationFactor : nodes.size());
	}

	/** Whether this node is one of the seeds (rather than a newcomer to be joined). */
	public boolean seeded() {
		return this.nodes.stream().anyMatch(this::isSelf);
	}

	public int size() {
		return this.nodes.size();
	}

	public boolean isSelf(Node node) {
		return this.self.id().equals(node.id());
	}

	/** Every node but this one. */
	public List<Node> peers() {
		return this.nodes.stream().filter((node) -> !isSelf(node)).toList();
	}

	@Override
	public String toString() {
		return "Topology[nodes=" + this.nodes + ", self=" + this.self + ", secret="
				+ ((this.secret != null) ? "(set)" : "(none)") + ", replicationFactor=" + this.replicationFactor + "]";
	}

}
