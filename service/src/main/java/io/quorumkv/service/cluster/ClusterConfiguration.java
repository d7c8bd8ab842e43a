package io.quorumkv.service.cluster;

import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The cluster as configured: its nodes, where keys are placed, and the clock. */
@Configuration(proxyBeanMethods = false)
class ClusterConfiguration {

	@Bean
	Topology topology(QuorumKvProperties properties, @Value("${server.port:8080}") int port) {
		ClusterProperties cluster = properties.cluster();
		Topology topology = Topology.of(cluster.nodes(), cluster.self(), cluster.secret(), port,
				cluster.replicationFactor());
		String id = NodeIdentity.loadOrCreate(properties.storage().path(), topology.self().id());
		if (!id.equals(topology.self().id())) {
			throw new IllegalStateException(
					"this node's data folder " + properties.storage().path() + " belongs to node " + id
							+ ", but it was started as " + topology.self() + ": start it with its own data folder");
		}
		return topology;
	}

	@Bean
	Placement placement(Topology topology, QuorumKvProperties properties) {
		ClusterProperties cluster = properties.cluster();
		return (cluster.placement() == PlacementStrategy.CONSISTENT_HASH)
				? cluster.placement().create(topology.nodes(), cluster.virtualNodes())
				: cluster.placement().create(topology.nodes());
	}

	@Bean
	HybridLogicalClock hybridLogicalClock() {
		return new HybridLogicalClock();
	}

}
