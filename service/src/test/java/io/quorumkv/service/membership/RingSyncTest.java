package io.quorumkv.service.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.service.cluster.ClusterProperties;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.ClusterStates;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.PeerClocks;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.peer.BreakerProperties;
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.peer.StreamProperties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;
import reactor.test.StepVerifier;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * Ring exchange with a voter fenced by a forced reconfiguration that came back with a log
 * that went on: it announces an epoch above this node's, in a generation below it. Its
 * ring is never taken, and its announcements are not fetched again each time it makes
 * them (every few seconds; each fetch used to log a warning).
 */
class RingSyncTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final LoopResources loops = LoopResources.create("ring-sync-test", 1, true);

	private final AtomicInteger fetches = new AtomicInteger();

	@TempDir
	Path folder;

	private DisposableServer fenced;

	private PeerClient client;

	private ClusterState state;

	private RingSync sync;

	private Node peer;

	@BeforeEach
	void start() {
		this.fenced = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route((routes) -> routes.get(InternalApi.RING_PATH, (request, response) -> {
				this.fetches.incrementAndGet();
				return response.sendString(reactor.core.publisher.Mono.just(RingJson.write(ringOf(this.peer, 12))));
			}))
			.bindNow();
		this.peer = new Node("n2", URI.create("http://127.0.0.1:" + this.fenced.port()));
		Node self = new Node("n1", URI.create("http://127.0.0.1:1"));
		Ring old = ringOf(this.peer, 5);
		// This node's ring: generation 1, which fenced the peer, at an epoch below the
		// peer's.
		this.state = ClusterStates.of(self, old.forceGeneration(List.of("n2")), this.folder);
		this.client = client(self);
		this.sync = new RingSync(this.state, this.client, TIMEOUT);
	}

	@AfterEach
	void close() {
		this.client.close();
		this.state.close();
		this.fenced.disposeNow();
		this.loops.disposeLater(Duration.ZERO, TIMEOUT).block(TIMEOUT);
	}

	@Test
	void aPeerOfAnOlderGenerationIsFetchedOnceForAnEpochAndNeverTaken() {
		long mine = this.state.epoch();
		for (int i = 0; i < 5; i++) {
			StepVerifier.create(this.sync.catchUp(this.peer, 12))
				.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(RingSync.OlderGeneration.class)
					.hasMessageContaining("metadata generation"))
				.verify(TIMEOUT);
		}
		assertThat(this.fetches).hasValue(1);
		assertThat(this.state.epoch()).isEqualTo(mine);
		assertThat(this.state.ring().orElseThrow().generation().number()).isEqualTo(1);
		// A higher epoch is news: fetched (and refused) once more.
		StepVerifier.create(this.sync.catchUp(this.peer, 13)).expectError().verify(TIMEOUT);
		assertThat(this.fetches).hasValue(2);
	}

	private static Ring ringOf(Node peer, long epoch) {
		Ring seed = Ring.seed("qkv-test", List.of(new Node("n1", URI.create("http://127.0.0.1:1")), peer,
				new Node("n3", URI.create("http://127.0.0.1:3"))), 3, PlacementStrategy.RENDEZVOUS, 16);
		return new Ring(seed.clusterId(), epoch, seed.replicationFactor(), seed.strategy(), seed.virtualNodes(),
				seed.nodes(), null);
	}

	private PeerClient client(Node self) {
		ClusterProperties cluster = new Binder(
				new MapConfigurationPropertySource(Map.of("quorumkv.cluster.replica-timeout", "10s")))
			.bindOrCreate("quorumkv.cluster", ClusterProperties.class);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		Binder defaults = new Binder(new MapConfigurationPropertySource(Map.of()));
		return new PeerClient(cluster, defaults.bindOrCreate("quorumkv.cluster.stream", StreamProperties.class),
				defaults.bindOrCreate("quorumkv.cluster.breaker", BreakerProperties.class), self, List.of(this.peer),
				"the-secret", 1 << 20, 1024, this.loops, new EventLoopTimers(this.loops.onClient(true)),
				new PeerClient.Clocks(HybridLogicalClock.inMemory(java.time.Clock.systemUTC(), Duration.ofMillis(500)),
						new PeerClocks(List.of(this.peer), Duration.ofSeconds(10), meters)),
				meters, null);
	}

}
