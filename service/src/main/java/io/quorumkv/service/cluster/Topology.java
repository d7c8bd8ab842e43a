package io.quorumkv.service.cluster;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The cluster as this node sees it at start: the seed nodes, which one is this node, the
 * shared secret of the internal API and the replication factor. Validated at start: no
 * node is listed twice, every node URL has the same scheme, a cluster of more than one
 * node has a secret (unless the nodes prove themselves with their certificates), and the
 * replication factor is between 1 and the number of nodes.
 *
 * @param nodes every seed node, in configuration order
 * @param self this node
 * @param secret the internal API's shared secret; null for a single node, or when the
 * nodes prove themselves with their certificates (mutual TLS)
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
		if (secret != null && secret.isBlank()) {
			throw new IllegalArgumentException("quorumkv.cluster.secret is blank");
		}
		if (replicationFactor < 1 || replicationFactor > nodes.size()) {
			throw new IllegalArgumentException("quorumkv.cluster.replication-factor must be between 1 and the "
					+ nodes.size() + " nodes of the cluster, was " + replicationFactor);
		}
	}

	/**
	 * Builds the topology from configuration, plain HTTP, every node a replica of every
	 * key.
	 * @see #of(List, URI, String, int, boolean, boolean, Integer)
	 */
	public static Topology of(List<URI> configuredNodes, @Nullable URI configuredSelf, @Nullable String secret,
			int port) {
		return of(configuredNodes, configuredSelf, secret, port, false, false, null);
	}

	/**
	 * Builds the topology from configuration, plain HTTP.
	 * @see #of(List, URI, String, int, boolean, boolean, Integer)
	 */
	public static Topology of(List<URI> configuredNodes, @Nullable URI configuredSelf, @Nullable String secret,
			int port, @Nullable Integer replicationFactor) {
		return of(configuredNodes, configuredSelf, secret, port, false, false, replicationFactor);
	}

	/**
	 * Builds the topology from configuration, every node a replica of every key.
	 * @see #of(List, URI, String, int, boolean, boolean, Integer)
	 */
	public static Topology of(List<URI> configuredNodes, @Nullable URI configuredSelf, @Nullable String secret,
			int port, boolean tls, boolean certificatesAuthenticate) {
		return of(configuredNodes, configuredSelf, secret, port, tls, certificatesAuthenticate, null);
	}

	/**
	 * Builds the topology from configuration, for plain HTTP or TLS between the nodes.
	 * @param configuredNodes {@code quorumkv.cluster.nodes}; empty means a single node
	 * @param configuredSelf {@code quorumkv.cluster.self}; null means
	 * {@code http(s)://127.0.0.1:<port>}
	 * @param secret {@code quorumkv.cluster.secret}
	 * @param port {@code server.port}
	 * @param tls whether the nodes talk TLS to each other: every node URL is then
	 * {@code https://}, otherwise {@code http://}
	 * @param certificatesAuthenticate whether a node proves itself to the others with its
	 * certificate (mutual TLS); otherwise a cluster of more than one node needs a secret
	 * @param replicationFactor {@code quorumkv.cluster.replication-factor}; null means
	 * the number of nodes
	 */
	public static Topology of(List<URI> configuredNodes, @Nullable URI configuredSelf, @Nullable String secret,
			int port, boolean tls, boolean certificatesAuthenticate, @Nullable Integer replicationFactor) {
		String scheme = tls ? "https" : "http";
		Node self = (configuredSelf != null) ? new Node(configuredSelf) : Node.of(scheme + "://127.0.0.1:" + port);
		List<Node> nodes = new ArrayList<>();
		configuredNodes.forEach((url) -> nodes.add(new Node(url)));
		if (nodes.isEmpty()) {
			nodes.add(self);
		}
		for (Node node : nodes) {
			if (!scheme.equals(node.url().getScheme())) {
				throw new IllegalArgumentException("quorumkv.cluster.nodes: " + node + " is not " + scheme + "://"
						+ (tls ? " (quorumkv.cluster.tls.bundle is set)"
								: " (set quorumkv.cluster.tls.bundle for TLS)"));
			}
		}
		if (nodes.size() > 1 && !certificatesAuthenticate && secret == null) {
			throw new IllegalArgumentException("quorumkv.cluster.secret is required for a cluster of " + nodes.size()
					+ " nodes (or mutual TLS: quorumkv.cluster.tls.mutual)");
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
