package io.quorumkv.service.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

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
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.metadata.MetadataGroup;
import io.quorumkv.service.peer.BreakerProperties;
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.peer.StreamProperties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * A forced reconfiguration checks that no member the survivor reaches serves a newer ring
 * (issue 51). Four nodes: n1 (the surviving voter, at epoch 5), n2 and n3 (voters lost
 * for good: nothing listens at their URLs) and n4, a listener stood in for by a server
 * answering {@code /ring/identity} and {@code /ring} at epoch 7 (it applied two changes
 * n1 never received). The metadata group is replaced by a recording fake: what is checked
 * is the decision, not Ratis ({@code ForcedReconfigurationTest} runs the real group).
 */
class ForcedReconfigurationNewestRingTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final String LOST_N2 = "http://127.0.0.1:2";

	private static final String LOST_N3 = "http://127.0.0.1:3";

	private final LoopResources loops = LoopResources.create("forced-newest-test", 1, true);

	private final AtomicInteger identityCalls = new AtomicInteger();

	/** The epoch of the ring each force started from. */
	private final List<Long> forcedFrom = new CopyOnWriteArrayList<>();

	private final AtomicReference<Ring> listenerRing = new AtomicReference<>();

	@TempDir
	Path folder;

	private DisposableServer listener;

	private Node n4;

	private PeerClient client;

	private ClusterState state;

	private ForcedReconfiguration forced;

	@BeforeEach
	void start() {
		this.listener = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route((routes) -> routes.get(InternalApi.RING_IDENTITY_PATH,
					(request, response) -> response.sendString(Mono.fromSupplier(() -> {
						this.identityCalls.incrementAndGet();
						return "{\"id\":\"n4\",\"url\":\"http://127.0.0.1:" + this.listenerPort()
								+ "\",\"clusterId\":\"qkv-test\",\"epoch\":" + this.listenerRing.get().epoch() + "}";
					})))
				.get(InternalApi.RING_PATH,
						(request, response) -> response
							.sendString(Mono.fromSupplier(() -> RingJson.write(this.listenerRing.get())))))
			.bindNow();
		Node self = new Node("n1", URI.create("http://127.0.0.1:1"));
		this.n4 = new Node("n4", URI.create("http://127.0.0.1:" + this.listener.port()));
		this.listenerRing.set(ringOf(this.n4, 7));
		this.state = ClusterStates.of(self, ringOf(this.n4, 5), this.folder);
		this.client = client(self, this.n4);
		RingSync sync = new RingSync(this.state, this.client, TIMEOUT);
		this.forced = new ForcedReconfiguration(this.state, new RecordingSteps(), this.client, sync, TIMEOUT);
	}

	@AfterEach
	void close() {
		this.client.close();
		this.state.close();
		this.listener.disposeNow();
		this.loops.disposeLater(Duration.ZERO, TIMEOUT).block(TIMEOUT);
	}

	@Test
	void aNewerRingOnAReachableMemberRefusesTheForceUntilThisNodeHoldsIt() {
		Membership.Answer refused = this.forced.run(List.of(LOST_N2, LOST_N3), false).block(TIMEOUT);
		assertThat(refused.status()).isEqualTo(409);
		assertThat(String.valueOf(refused.body().get("refused"))).contains("node n4 (http://127.0.0.1:")
			.contains("serves ring epoch 7, newer than this node's 5")
			.contains("--allow-older-ring")
			.doesNotContain("(it is a voter)");
		assertThat(this.forcedFrom).isEmpty();
		// The refusal started ring exchange from n4: this node takes epoch 7.
		for (int i = 0; i < 400 && this.state.epoch() < 7; i++) {
			Mono.delay(Duration.ofMillis(25)).block(TIMEOUT);
		}
		assertThat(this.state.epoch()).isEqualTo(7);
		Membership.Answer done = this.forced.run(List.of(LOST_N2, LOST_N3), false).block(TIMEOUT);
		assertThat(done.status()).as("%s", done.body()).isEqualTo(200);
		assertThat(this.forcedFrom).containsExactly(7L);
	}

	@Test
	void allowingAnOlderRingForcesFromThisNodesRingWithoutAskingTheOthers() {
		Membership.Answer done = this.forced.run(List.of(LOST_N2, LOST_N3), true).block(TIMEOUT);
		assertThat(done.status()).as("%s", done.body()).isEqualTo(200);
		assertThat(done.body().get("epoch")).isEqualTo(5L);
		assertThat(this.forcedFrom).containsExactly(5L);
		assertThat(this.identityCalls).hasValue(0);
	}

	@Test
	void aMemberNoNewerThanThisNodeDoesNotStopTheForce() {
		this.listenerRing.set(ringOf(this.n4, 5));
		Membership.Answer done = this.forced.run(List.of(LOST_N2, LOST_N3), false).block(TIMEOUT);
		assertThat(done.status()).as("%s", done.body()).isEqualTo(200);
		assertThat(this.forcedFrom).containsExactly(5L);
		assertThat(this.identityCalls).hasValue(1);
	}

	private int listenerPort() {
		return this.listener.port();
	}

	/** n1..n4 at {@code epoch}: n1, n2 and n3 vote, n4 listens. */
	private static Ring ringOf(Node n4, long epoch) {
		List<Node> nodes = new ArrayList<>(List.of(new Node("n1", URI.create("http://127.0.0.1:1")),
				new Node("n2", URI.create(LOST_N2)), new Node("n3", URI.create(LOST_N3)), n4));
		Ring seed = Ring.seed("qkv-test", nodes, 3, PlacementStrategy.RENDEZVOUS, 16);
		return new Ring(seed.clusterId(), epoch, seed.replicationFactor(), seed.strategy(), seed.virtualNodes(),
				seed.nodes(), null);
	}

	/** The group's side of a force: every check passes, each force is recorded. */
	private final class RecordingSteps implements ForcedReconfiguration.Steps {

		@Override
		public Mono<Void> requireDead(RingNode node) {
			return Mono.empty();
		}

		@Override
		public Mono<Ring> forceBase(List<String> lostIds) {
			return Mono.fromSupplier(() -> ForcedReconfigurationNewestRingTest.this.state.ring().orElseThrow());
		}

		@Override
		public Mono<MetadataGroup.Forced> forceNewGeneration(List<String> lostIds) {
			return Mono.fromSupplier(() -> {
				long epoch = ForcedReconfigurationNewestRingTest.this.state.epoch();
				ForcedReconfigurationNewestRingTest.this.forcedFrom.add(epoch);
				return new MetadataGroup.Forced(1, epoch, List.of("n1", "n4"), lostIds);
			});
		}

	}

	private PeerClient client(Node self, Node peer) {
		ClusterProperties cluster = new Binder(
				new MapConfigurationPropertySource(Map.of("quorumkv.cluster.replica-timeout", "10s")))
			.bindOrCreate("quorumkv.cluster", ClusterProperties.class);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		Binder defaults = new Binder(new MapConfigurationPropertySource(Map.of()));
		return new PeerClient(cluster, defaults.bindOrCreate("quorumkv.cluster.stream", StreamProperties.class),
				defaults.bindOrCreate("quorumkv.cluster.breaker", BreakerProperties.class), self, List.of(peer),
				"the-secret", 1 << 20, 1024, this.loops, new EventLoopTimers(this.loops.onClient(true)),
				new PeerClient.Clocks(HybridLogicalClock.inMemory(java.time.Clock.systemUTC(), Duration.ofMillis(500)),
						new PeerClocks(List.of(peer), Duration.ofSeconds(10), meters)),
				meters, null);
	}

}
