package io.quorumkv.service.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Placement;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;
import io.quorumkv.service.http.BodyBudget;
import io.quorumkv.service.replication.HintStore;
import io.quorumkv.service.replication.HintedHandoff;
import io.quorumkv.service.replication.PeerClient;
import io.quorumkv.service.replication.ReplicationService;
import io.quorumkv.storage.Storage;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.http.client.ReactorResourceFactory;

/** The cluster as configured, and the coordinator with its peers, hints and clock. */
@Configuration(proxyBeanMethods = false)
public class ReplicationConfiguration {

	/**
	 * The peer connections' stop phase: one above {@link ReactorResourceFactory}'s 0, so
	 * they close just before the event loops stop.
	 */
	static final int PEER_CLIENT_PHASE = 1;

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

	@Bean
	BodyBudget bodyBudget(QuorumKvProperties properties, MeterRegistry meters) {
		return new BodyBudget(properties.http().maxBufferedBodies().toBytes(), meters);
	}

	@Bean
	HybridLogicalClock hybridLogicalClock() {
		return new HybridLogicalClock();
	}

	/**
	 * Closed by {@link #peerClientCloser} once started; at destruction only when the
	 * context never started (closing twice does nothing more).
	 */
	@Bean(destroyMethod = "close")
	PeerClient peerClient(Topology topology, QuorumKvProperties properties, ReactorResourceFactory reactorResources,
			MeterRegistry meters) {
		String secret = (topology.secret() != null) ? topology.secret() : "";
		return new PeerClient(properties.cluster(), secret, (int) properties.http().maxBodySize().toBytes(),
				reactorResources.getLoopResources(), meters);
	}

	/**
	 * Closes the connections to the peers once the web server has stopped (its graceful
	 * shutdown included) and before the event loops stop: a pooled connection is closed
	 * on its own loop, and Reactor Netty's resources stop in phase 0. Closed at bean
	 * destruction instead, after the loops, each connection's close failed with a logged
	 * error.
	 */
	@Bean
	SmartLifecycle peerClientCloser(PeerClient peers) {
		return new SmartLifecycle() {

			private volatile boolean running;

			@Override
			public void start() {
				this.running = true;
			}

			@Override
			public void stop() {
				this.running = false;
				peers.close();
			}

			@Override
			public boolean isRunning() {
				return this.running;
			}

			@Override
			public int getPhase() {
				return PEER_CLIENT_PHASE;
			}

		};
	}

	@Bean(destroyMethod = "close")
	HintStore hintStore(StorageFactory storages, Topology topology, QuorumKvProperties properties,
			MeterRegistry meters) {
		return new HintStore(storages.open(properties.storage().path().resolve("hints")), topology.peers(),
				properties.cluster().hints().maxPending(), meters);
	}

	@Bean(destroyMethod = "close")
	HintedHandoff hintedHandoff(HintStore hints, PeerClient peers, Topology topology, QuorumKvProperties properties,
			HybridLogicalClock clock, MeterRegistry meters) {
		return new HintedHandoff(hints, peers, topology.peers(), properties.cluster().hints(), clock, meters);
	}

	/**
	 * Stops hint delivery when the context starts closing, before the event loops stop.
	 */
	@Bean
	ApplicationListener<ContextClosedEvent> hintedHandoffStopper(HintedHandoff hintedHandoff) {
		return (event) -> hintedHandoff.close();
	}

	@Bean
	ReplicationService replicationService(Topology topology, Placement placement, Storage storage,
			HybridLogicalClock clock, PeerClient peers, HintStore hints, QuorumKvProperties properties,
			MeterRegistry meters) {
		return new ReplicationService(topology, placement, storage, clock, peers, hints, properties.cluster(),
				(int) properties.http().maxKeySize().toBytes(), meters);
	}

}
