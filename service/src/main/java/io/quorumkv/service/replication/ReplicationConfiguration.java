package io.quorumkv.service.replication;

import java.util.ArrayList;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Placement;
import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.config.QuorumKvProperties.BatchProperties;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;
import io.quorumkv.service.storage.StorageFactory;
import io.quorumkv.storage.Storage;
import reactor.netty.resources.LoopResources;

import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * The coordinator and what it reaches the replicas with: the one peer transport
 * ({@link PeerClient}), this node's own replica and the peers', hints and their delivery.
 */
@Configuration(proxyBeanMethods = false)
class ReplicationConfiguration {

	/**
	 * The peer connections' stop phase: one above {@link ReactorResourceFactory}'s 0, so
	 * they close just before the event loops stop.
	 */
	static final int PEER_CLIENT_PHASE = 1;

	/**
	 * Deadline timers on the node's event loops (the server's, which the client shares).
	 */
	@Bean
	EventLoopTimers eventLoopTimers(ReactorResourceFactory reactorResources) {
		return new EventLoopTimers(reactorResources.getLoopResources().onServer(LoopResources.DEFAULT_NATIVE));
	}

	/**
	 * Closed by {@link #peerClientCloser} once started; at destruction only when the
	 * context never started (closing twice does nothing more).
	 */
	@Bean(destroyMethod = "close")
	PeerClient peerClient(Topology topology, QuorumKvProperties properties, ReactorResourceFactory reactorResources,
			EventLoopTimers timers, MeterRegistry meters, SslBundles sslBundles) {
		int maxFrameSize = InternalApi.maxBatchBody(properties.cluster().batch(),
				(int) properties.http().maxBodySize().toBytes());
		String bundle = properties.cluster().tls().bundle();
		PeerTls tls = (bundle != null) ? PeerTls.of(sslBundles, bundle) : null;
		return new PeerClient(properties.cluster(), topology.peers(), topology.secret(), maxFrameSize,
				reactorResources.getLoopResources(), timers, meters, tls);
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
			HybridLogicalClock clock, PeerClient peers, HintStore hints, EventLoopTimers timers,
			QuorumKvProperties properties, MeterRegistry meters) {
		ClusterProperties cluster = properties.cluster();
		BatchProperties batch = cluster.batch();
		List<Replica> replicas = new ArrayList<>();
		replicas.add(new LocalReplica(topology.self(), storage,
				new LocalWrites(storage, cluster.replicaTimeout(), timers, batch.localWrites()),
				cluster.replicaTimeout(), timers));
		PeerBatcher.Limits limits = new PeerBatcher.Limits(batch.maxInFlight(), batch.maxOps(),
				(int) batch.maxBytes().toBytes(), cluster.maxPendingPerPeer(),
				(int) properties.http().maxKeySize().toBytes(), cluster.replicaTimeout());
		for (Node peer : topology.peers()) {
			PeerBatcher batcher = batch.enabled() ? new PeerBatcher(peer.id(), (body) -> peers.batch(peer, body),
					(key) -> peers.get(peer, key), limits, batch.waitForTurn() ? timers : null, meters) : null;
			replicas.add(new PeerReplica(peer, peers, batcher, hints));
		}
		return new ReplicationService(placement, replicas, clock, cluster.maxConcurrentRepairs(), meters);
	}

}
