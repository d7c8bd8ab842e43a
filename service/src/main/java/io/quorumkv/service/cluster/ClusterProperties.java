package io.quorumkv.service.cluster;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.quorumkv.service.config.Bounds;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code quorumkv.cluster.*} settings: the nodes, this node's place among them, the
 * calls to peers and the clock, validated when bound (a bad value stops the start with a
 * message naming the property). The settings of one protocol bind in its package under
 * this prefix: {@code .membership} ({@code membership.MembershipProperties}),
 * {@code .hints} and {@code .scan} ({@code replication}), {@code .breaker} and
 * {@code .stream} ({@code peer}).
 *
 * @param nodes base URLs of the nodes a cluster starts with (its seeds), this one
 * included unless it is a newcomer to be joined; empty for a single node. Read on a
 * node's first start only: then the ring in its data folder counts
 * @param self this node's base URL as listed in {@code nodes}; defaults to
 * {@code http://127.0.0.1:<server.port>}
 * @param secret shared secret that nodes present to each other on the internal API;
 * required when there is more than one node
 * @param replicaTimeout how long the coordinator waits for a replica before counting it
 * as failed (504 when too few answered)
 * @param connectTimeout TCP connect timeout to a peer
 * @param maxConnectionsPerPeer pooled keep-alive connections to each peer, shared by
 * every call to it (a replica stream holds one per event loop; scans, repair and ring
 * calls take one for a call)
 * @param maxPendingPerPeer requests waiting for a pooled connection, per peer; more fail
 * at once
 * @param maxConcurrentCallsPerPeer replica operations in flight on one stream to a peer
 * (one per event loop); more fail at once
 * @param maxConcurrentRepairs read repairs in flight; more are skipped and counted
 * @param placement how keys are placed on nodes: {@code rendezvous} or
 * {@code consistent-hash}
 * @param virtualNodes virtual nodes per node for {@code consistent-hash}
 * @param replicationFactor how many nodes hold each key (the first of its placement
 * order), 1 up to the number of nodes; by default every node; the default and the largest
 * {@code from} of a request. Like {@code nodes}, it seeds the ring of a cluster's first
 * start only
 * @param id the cluster's id, which a node of another cluster does not share; by default
 * derived from {@code nodes}
 * @param tls TLS of the calls to the peers
 * @param maxClockSkew a timestamp from another node (a replica write, a batch, a hint, a
 * read answer, a repair stream) further ahead of this node's wall clock than this is
 * refused and never adopted
 * @param clockReservation the clock's high-water mark is written to the data folder ahead
 * of the stamps by this much, about once per this much progress; a restart never stamps
 * below an earlier write
 * @param clockOffsetWarning health warns (status WARNING) when a peer's measured clock
 * offset exceeds this; less than max-clock-skew
 */
@ConfigurationProperties("quorumkv.cluster")
public record ClusterProperties(@DefaultValue List<URI> nodes, @Nullable URI self, @Nullable String secret,
		@DefaultValue("1s") Duration replicaTimeout, @DefaultValue("500ms") Duration connectTimeout,
		@DefaultValue("64") int maxConnectionsPerPeer, @DefaultValue("1024") int maxPendingPerPeer,
		@DefaultValue("512") int maxConcurrentCallsPerPeer, @DefaultValue("256") int maxConcurrentRepairs,
		@DefaultValue("rendezvous") PlacementSetting placement, @DefaultValue("128") int virtualNodes,
		@Nullable Integer replicationFactor, @Nullable String id, @DefaultValue TlsProperties tls,
		@DefaultValue("500ms") Duration maxClockSkew, @DefaultValue("1s") Duration clockReservation,
		@DefaultValue("250ms") Duration clockOffsetWarning) {

	public ClusterProperties {
		nodes = List.copyOf(nodes);
		if (replicationFactor != null && replicationFactor < 1) {
			throw new IllegalArgumentException("quorumkv.cluster.replication-factor must be at least 1");
		}
		positive(replicaTimeout, "replica-timeout");
		positive(connectTimeout, "connect-timeout");
		atLeastOne(maxConnectionsPerPeer, "max-connections-per-peer");
		atLeastOne(maxPendingPerPeer, "max-pending-per-peer");
		atLeastOne(maxConcurrentCallsPerPeer, "max-concurrent-calls-per-peer");
		atLeastOne(maxConcurrentRepairs, "max-concurrent-repairs");
		atLeastOne(virtualNodes, "virtual-nodes");
		positive(maxClockSkew, "max-clock-skew");
		positive(clockReservation, "clock-reservation");
		positive(clockOffsetWarning, "clock-offset-warning");
		if (clockOffsetWarning.compareTo(maxClockSkew) >= 0) {
			throw new IllegalArgumentException(
					"quorumkv.cluster.clock-offset-warning must be less than quorumkv.cluster.max-clock-skew");
		}
	}

	@Override
	public String toString() {
		// Never print the secret.
		return "ClusterProperties[nodes=" + this.nodes + ", self=" + this.self + ", secret="
				+ ((this.secret != null) ? "(set)" : "(none)") + ", replicaTimeout=" + this.replicaTimeout
				+ ", replicationFactor=" + this.replicationFactor + "]";
	}

	/**
	 * TLS between the nodes (docs/security.md). The server side is Spring Boot's
	 * {@code server.ssl.bundle}; this is the side of the calls a node makes to its peers.
	 *
	 * @param bundle the Spring Boot SSL bundle ({@code spring.ssl.bundle.*}) of the calls
	 * to peers: its trust store decides which peer certificates are accepted, and its key
	 * store is this node's certificate when a peer asks for one; unset: plain HTTP, and
	 * every node URL is {@code http://}
	 * @param mutual whether a peer that presents a certificate trusted by
	 * {@code server.ssl} and naming one of the nodes' hosts may call the internal API
	 * without the cluster secret (which then becomes optional); needs
	 * {@code server.ssl.client-auth} {@code want} or {@code need}
	 */
	public record TlsProperties(@Nullable String bundle, @DefaultValue("false") boolean mutual) {

		public TlsProperties {
			if (bundle != null && bundle.isBlank()) {
				throw new IllegalArgumentException("quorumkv.cluster.tls.bundle is blank");
			}
			if (mutual && bundle == null) {
				throw new IllegalArgumentException(
						"quorumkv.cluster.tls.mutual needs quorumkv.cluster.tls.bundle (the peers' SSL bundle)");
			}
		}

	}

	private static void positive(Duration value, String name) {
		Bounds.positive(value, "quorumkv.cluster." + name);
	}

	private static void atLeastOne(long value, String name) {
		Bounds.atLeastOne(value, "quorumkv.cluster." + name);
	}

	/**
	 * The placement algorithm named by {@code quorumkv.cluster.placement}
	 * ({@code rendezvous} or {@code consistent-hash}; Spring's relaxed enum binding maps
	 * those values to the constants). The {@code cluster} package builds the placement it
	 * names.
	 */
	public enum PlacementSetting {

		/** Rendezvous (highest random weight) hashing. */
		RENDEZVOUS,

		/** Consistent hashing on a ring of virtual nodes. */
		CONSISTENT_HASH

	}

}
