package io.quorumkv.service.cluster;

import java.time.Clock;

import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The cluster as configured: its nodes, where keys are placed, and the clock. */
@Configuration(proxyBeanMethods = false)
class ClusterConfiguration {

	@Bean
	Topology topology(QuorumKvProperties properties, @Value("${server.port:8080}") int port) {
		ClusterProperties cluster = properties.cluster();
		return Topology.of(cluster.nodes(), cluster.self(), cluster.secret(), port, cluster.tls().bundle() != null,
				cluster.tls().mutual());
	}

	@Bean
	Placement placement(Topology topology, QuorumKvProperties properties) {
		ClusterProperties cluster = properties.cluster();
		return (cluster.placement() == PlacementStrategy.CONSISTENT_HASH)
				? cluster.placement().create(topology.nodes(), cluster.virtualNodes())
				: cluster.placement().create(topology.nodes());
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
	HybridLogicalClock hybridLogicalClock(Clock clock) {
		return new HybridLogicalClock(clock);
	}

}
