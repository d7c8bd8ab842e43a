package io.quorumkv.service.cluster;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The cluster as configured: its nodes, where keys are placed, and the clock. The wall
 * clock is a {@link Clock} bean when the context has one (tests inject a skewed or manual
 * clock that way), the system's UTC clock otherwise.
 */
@Configuration(proxyBeanMethods = false)
class ClusterConfiguration {

	/** Window of the peers' clock offset estimates. */
	static final Duration OFFSET_WINDOW = Duration.ofSeconds(10);

	@Bean
	Topology topology(QuorumKvProperties properties, @Value("${server.port:8080}") int port) {
		ClusterProperties cluster = properties.cluster();
		return Topology.of(cluster.nodes(), cluster.self(), cluster.secret(), port);
	}

	@Bean
	Placement placement(Topology topology, QuorumKvProperties properties) {
		ClusterProperties cluster = properties.cluster();
		return (cluster.placement() == PlacementStrategy.CONSISTENT_HASH)
				? cluster.placement().create(topology.nodes(), cluster.virtualNodes())
				: cluster.placement().create(topology.nodes());
	}

	/**
	 * Durable: its high-water mark is {@code <quorumkv.storage.path>/clock}. Closed after
	 * every bean that stamps (they depend on it), writing the exact last stamp.
	 */
	@Bean(destroyMethod = "close")
	HybridLogicalClock hybridLogicalClock(ObjectProvider<Clock> wall, QuorumKvProperties properties)
			throws IOException {
		ClusterProperties cluster = properties.cluster();
		return HybridLogicalClock.durable(wall.getIfAvailable(Clock::systemUTC), cluster.maxClockSkew(),
				properties.storage().path().resolve("clock"), cluster.clockReservation());
	}

	@Bean
	ClockGuard clockGuard(HybridLogicalClock clock, MeterRegistry meters) {
		return new ClockGuard(clock, meters);
	}

	@Bean
	PeerClocks peerClocks(Topology topology, MeterRegistry meters) {
		return new PeerClocks(topology.peers(), OFFSET_WINDOW, meters);
	}

}
