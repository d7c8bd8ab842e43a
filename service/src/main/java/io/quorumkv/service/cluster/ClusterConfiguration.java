package io.quorumkv.service.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.stream.Collectors;

import com.dynatrace.hash4j.hashing.Hashing;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.storage.StorageProperties;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The cluster: the configuration ({@link Topology}), this node's id and ring
 * ({@link ClusterState}: the stored ring, or on a seed's first start the ring seeded from
 * {@code quorumkv.cluster.nodes}), and the clock. The wall clock is a {@link Clock} bean:
 * the hybrid logical clock's source and what storage judges expiry by; the context's own
 * when it has one (tests inject a skewed or manual clock that way), the system's UTC
 * clock otherwise.
 */
@Configuration(proxyBeanMethods = false)
class ClusterConfiguration {

	/** Window of the peers' clock offset estimates. */
	static final Duration OFFSET_WINDOW = Duration.ofSeconds(10);

	private static final Log logger = LogFactory.getLog(ClusterConfiguration.class);

	/**
	 * The topology from configuration. A single node with no secret (and no mutual TLS)
	 * gets one made for this process: its metadata group's client reaches the group's
	 * leader, itself, through the internal API, which refuses a caller without proof. No
	 * other process knows it, so every other caller is still refused.
	 */
	@Bean
	Topology topology(ClusterProperties cluster, @Value("${server.port:8080}") int port) {
		String secret = cluster.secret();
		if (secret == null && cluster.nodes().size() <= 1 && !cluster.tls().mutual()) {
			secret = processSecret();
		}
		return Topology.of(cluster.nodes(), cluster.self(), secret, port, cluster.tls().bundle() != null,
				cluster.tls().mutual(), cluster.replicationFactor());
	}

	private static String processSecret() {
		byte[] bytes = new byte[32];
		new SecureRandom().nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

	@Bean(destroyMethod = "close")
	ClusterState clusterState(Topology topology, ClusterProperties cluster, StorageProperties storage) {
		Path folder = storage.path();
		String id = NodeIdentity.loadOrCreate(folder, topology.seeded() ? topology.self().id() : NodeIdentity.fresh());
		Node self = new Node(id, topology.self().url());
		RingFile file = new RingFile(folder);
		Ring ring = file.read();
		boolean confirmed = true;
		if (ring == null && topology.seeded()) {
			String clusterId = (cluster.id() != null) ? cluster.id() : derivedId(topology);
			ring = Ring.seed(clusterId, topology.nodes(), topology.replicationFactor(),
					PlacementStrategy.of(cluster.placement()), cluster.virtualNodes());
			file.write(ring);
			logger.info("First start: seeded " + ring.describe() + " from quorumkv.cluster.nodes");
		}
		else if (ring == null) {
			logger.info("Node " + self + " is not among the seeds " + topology.nodes()
					+ ": it serves no data until it is joined (scripts/qkv join " + self.base() + ")");
		}
		else {
			check(ring, self, cluster, topology);
			// Others may have changed the ring while this node was down: it coordinates
			// once the metadata group confirms its ring (MetadataGroup).
			confirmed = ring.nodes()
				.stream()
				.allMatch((node) -> node.id().equals(id) || node.state() == NodeState.REMOVED);
		}
		return new ClusterState(self, file, ring, cluster.replicaTimeout().multipliedBy(2), confirmed);
	}

	/** A stored ring is what counts; refuse to start when it cannot be this node's. */
	private static void check(Ring ring, Node self, ClusterProperties cluster, Topology topology) {
		@Nullable String configured = cluster.id();
		if (configured != null && !configured.equals(ring.clusterId())) {
			throw new IllegalStateException("the ring in this node's data folder is of cluster " + ring.clusterId()
					+ ", but quorumkv.cluster.id is " + configured + ": a node of another cluster is refused");
		}
		ring.node(self.id()).ifPresent((listed) -> {
			if (!listed.url().equals(self.url())) {
				throw new IllegalStateException("the ring lists this node (" + self.id() + ") at " + listed.url()
						+ ", but it was started as " + self.url() + ": start it at its ring URL");
			}
		});
		if (topology.replicationFactor() != ring.replicationFactor() && cluster.replicationFactor() != null) {
			logger.warn("quorumkv.cluster.replication-factor is " + topology.replicationFactor() + ", the ring's is "
					+ ring.replicationFactor() + ": the ring's counts (the setting seeds a "
					+ "cluster's first start only)");
		}
		logger.info("Loaded " + ring.describe() + "; quorumkv.cluster.nodes only seeds a first start");
	}

	/**
	 * The id of a cluster whose configuration names none: derived from its seeds, so that
	 * every seed computes the same one on its first start.
	 */
	static String derivedId(Topology topology) {
		String seeds = topology.nodes().stream().map(Node::id).sorted().collect(Collectors.joining("\n"));
		long hash = Hashing.xxh3_64().hashBytesToLong(seeds.getBytes(StandardCharsets.UTF_8));
		return "qkv-" + HexFormat.of().toHexDigits(hash);
	}

	/**
	 * Durable: its high-water mark is {@code <quorumkv.storage.path>/clock}. Closed after
	 * every bean that stamps (they depend on it), writing the exact last stamp.
	 */
	@Bean(destroyMethod = "close")
	HybridLogicalClock hybridLogicalClock(Clock wall, ClusterProperties cluster, StorageProperties storage)
			throws IOException {
		return HybridLogicalClock.durable(wall, cluster.maxClockSkew(), storage.path().resolve("clock"),
				cluster.clockReservation());
	}

	/**
	 * The node's wall clock: the hybrid logical clock's source, and what storage judges
	 * expiry by. Tests give a clock they move (a {@code Clock} bean of their own).
	 */
	@Bean
	@ConditionalOnMissingBean(Clock.class)
	Clock clock() {
		return Clock.systemUTC();
	}

	@Bean
	ClockGuard clockGuard(HybridLogicalClock clock, MeterRegistry meters) {
		return new ClockGuard(clock, meters);
	}

	/**
	 * The ring's other members are exported from the start, a node joining later once
	 * measured.
	 */
	@Bean
	PeerClocks peerClocks(ClusterState state, MeterRegistry meters) {
		String self = state.self().id();
		return new PeerClocks(state.ring()
			.map((ring) -> ring.nodes()
				.stream()
				.filter((node) -> node.state() != NodeState.REMOVED && !node.id().equals(self))
				.map(RingNode::node)
				.toList())
			.orElse(java.util.List.of()), OFFSET_WINDOW, meters);
	}

}
