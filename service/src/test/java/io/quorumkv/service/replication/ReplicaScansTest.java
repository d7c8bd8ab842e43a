package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.service.cluster.ClusterProperties;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.PeerClocks;
import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.BreakerProperties;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.peer.StreamProperties;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;
import reactor.test.StepVerifier;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * A page of a range read ({@link ReplicaScans#page}) against a bare server that answers
 * every scan with the same page: the limit is asked for, and a page cancelled midway is
 * read to its end so that its connection serves the next call.
 */
class ReplicaScansTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	/** Entries of the server's page: with their values, far more than one read. */
	private static final int PAGE = 300;

	private final LoopResources loops = LoopResources.create("peer-scan-test", 1, true);

	private final Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();

	private final Queue<String> queries = new ConcurrentLinkedQueue<>();

	private DisposableServer server;

	private PeerClient client;

	private Node peer;

	@BeforeEach
	void start() {
		byte[] value = new byte[2048];
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			this.clientPorts.add(request.remoteAddress().getPort());
			this.queries.add(request.uri());
			// A start of "big": a node of a version before the limit, sending the rest of
			// a range far over the largest frame (1 MB here) whatever the limit.
			int entries = request.uri().contains("start=big") ? 10 * PAGE : PAGE;
			return response
				.sendByteArray(Flux.range(0, entries)
					.map((i) -> EntryFrame
						.encode(Entry.value(String.format("k%04d", i).getBytes(StandardCharsets.UTF_8), value, 1))))
				.then();
		}).bindNow();
		// One connection, so the calls must share it; waiting for it is bounded by the
		// replica timeout, 1 s by default, which a cancelled page's drain can take on a
		// loaded two-core machine: the test is about reuse, not speed.
		ClusterProperties cluster = new Binder(new MapConfigurationPropertySource(
				Map.of("quorumkv.cluster.max-connections-per-peer", "1", "quorumkv.cluster.replica-timeout", "10s")))
			.bindOrCreate("quorumkv.cluster", ClusterProperties.class);
		this.peer = new Node(URI.create("http://127.0.0.1:" + this.server.port()));
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		Binder defaults = new Binder(new MapConfigurationPropertySource(Map.of()));
		this.client = new PeerClient(cluster, defaults.bindOrCreate("quorumkv.cluster.stream", StreamProperties.class),
				defaults.bindOrCreate("quorumkv.cluster.breaker", BreakerProperties.class),
				Node.of("http://127.0.0.1:1"), List.of(this.peer), "the-secret", 1 << 20, 1024, this.loops,
				new EventLoopTimers(this.loops.onClient(true)),
				new PeerClient.Clocks(HybridLogicalClock.inMemory(java.time.Clock.systemUTC(), Duration.ofMillis(500)),
						new PeerClocks(List.of(this.peer), Duration.ofSeconds(10), meters)),
				meters, null);
	}

	@AfterEach
	void close() {
		this.client.close();
		this.server.disposeNow();
		this.loops.disposeLater(Duration.ZERO, TIMEOUT).block(TIMEOUT);
	}

	@Test
	void asksForThePageWithItsLimitAndDecodesIt() {
		StepVerifier
			.create(ReplicaScans.page(this.client, this.peer, "a b".getBytes(StandardCharsets.UTF_8), null, PAGE))
			.expectNextCount(PAGE)
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(this.queries).containsExactly(InternalApi.ENTRIES_PATH + "?start=a%20b&limit=" + PAGE);
	}

	@Test
	void aPageCancelledMidwayIsReadToItsEndAndItsConnectionServesTheNextCall() {
		for (int i = 0; i < 3; i++) {
			StepVerifier
				.create(ReplicaScans.page(this.client, this.peer, new byte[] { 'k' }, new byte[] { 'l' }, PAGE).take(2))
				.expectNextCount(2)
				.expectComplete()
				.verify(TIMEOUT);
		}
		StepVerifier.create(ReplicaScans.page(this.client, this.peer, new byte[] { 'k' }, null, PAGE))
			.expectNextCount(PAGE)
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(this.queries).hasSize(4);
		assertThat(this.clientPorts).as("one keep-alive connection carried every page").hasSize(1);
	}

	@Test
	void aCancelledAnswerWithMoreThanAFrameLeftIsClosedRatherThanRead() {
		StepVerifier
			.create(ReplicaScans.page(this.client, this.peer, "big".getBytes(StandardCharsets.UTF_8), null, 10).take(2))
			.expectNextCount(2)
			.expectComplete()
			.verify(TIMEOUT);
		StepVerifier.create(ReplicaScans.page(this.client, this.peer, new byte[] { 'k' }, null, PAGE))
			.expectNextCount(PAGE)
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(this.clientPorts).as("the long answer's connection was closed").hasSize(2);
	}

}
