package io.quorumkv.service.replication;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.ClusterProperties;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.PeerClocks;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.peer.StreamProperties;
import io.quorumkv.service.peer.BreakerProperties;
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.security.PeerTls;
import io.quorumkv.service.storage.StorageFactory;
import io.quorumkv.service.storage.StorageProperties;
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
	PeerClient peerClient(Topology topology, ClusterState cluster, ClusterProperties settings, HttpProperties http,
			ReactorResourceFactory reactorResources, EventLoopTimers timers, HybridLogicalClock clock,
			PeerClocks offsets, MeterRegistry meters, SslBundles sslBundles, StreamProperties stream,
			BreakerProperties breaker) {
		int maxFrameSize = InternalApi.maxFrame(stream, (int) http.maxBodySize().toBytes());
		String bundle = settings.tls().bundle();
		PeerTls tls = (bundle != null) ? PeerTls.of(sslBundles, bundle) : null;
		return new PeerClient(settings, stream, breaker, cluster.self(), peers(cluster), topology.secret(),
				maxFrameSize, (int) http.maxKeySize().toBytes(), reactorResources.getLoopResources(), timers,
				new PeerClient.Clocks(clock, offsets), meters, tls);
	}

	/** The other nodes of the ring this node starts with. */
	private static List<Node> peers(ClusterState cluster) {
		String self = cluster.self().id();
		return cluster.ring()
			.map((ring) -> ring.nodes()
				.stream()
				.filter((node) -> node.state() != NodeState.REMOVED && !node.id().equals(self))
				.map(RingNode::node)
				.toList())
			.orElse(List.of());
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
	HintStore hintStore(StorageFactory storages, ClusterState cluster, StorageProperties storageSettings,
			HintProperties hintSettings, MeterRegistry meters) {
		return new HintStore(storages.openLocal(storageSettings.path().resolve("hints")), peers(cluster),
				hintSettings.maxPending(), meters);
	}

	@Bean(destroyMethod = "close")
	HintedHandoff hintedHandoff(HintStore hints, PeerClient peers, ClusterState cluster, Storage storage,
			HintProperties settings, HybridLogicalClock clock, MeterRegistry meters) {
		return new HintedHandoff(hints, peers, cluster, storage, settings, clock, meters);
	}

	/**
	 * Stops hint delivery when the context starts closing, before the event loops stop.
	 */
	@Bean
	ApplicationListener<ContextClosedEvent> hintedHandoffStopper(HintedHandoff hintedHandoff) {
		return (event) -> hintedHandoff.close();
	}

	@Bean
	ReplicationService replicationService(ClusterState state, Storage storage, HybridLogicalClock clock,
			ClockGuard guard, PeerClient peers, HintStore hints, EventLoopTimers timers, ClusterProperties cluster,
			StreamProperties stream, ScanProperties scan, MeterRegistry meters) {
		LocalReplica local = new LocalReplica(state.self(), storage,
				new LocalWrites(storage, cluster.replicaTimeout(), timers, stream.localWrites()),
				cluster.replicaTimeout(), timers);
		ReplicaDirectory replicas = new ReplicaDirectory(local, state::self,
				(peer) -> new PeerReplica(peer, peers, hints, guard));
		return new ReplicationService(state, replicas, clock, cluster.maxConcurrentRepairs(), scan, meters);
	}

}
