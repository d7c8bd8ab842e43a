package io.quorumkv.service.cluster;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.quorumkv.service.peer.StreamFrames;
import io.quorumkv.service.support.StreamCalls;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Three real nodes and their ring: seeded once, kept in the data folder, served at
 * {@code GET /v0/ring}, carried by every internal call so that a node behind catches up
 * and a caller behind or of another cluster is refused.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(OutputCaptureExtension.class)
class RingExchangeTest {

	@TempDir
	static Path root;

	static TestCluster cluster;

	/** The public answers' ring epoch (docs/api.md). */
	private static final String EPOCH = "X-QuorumKV-Epoch";

	@BeforeAll
	static void start() {
		cluster = new TestCluster(root, 3, Map.of("quorumkv.cluster.replication-factor", "2")).startAll();
	}

	@AfterAll
	static void stop() {
		cluster.close();
	}

	@Test
	@Order(1)
	void everyNodeServesTheSameSeededRing() {
		String first = publicRing(0);
		assertThat(first).startsWith("{\"clusterId\":\"qkv-")
			.contains("\"epoch\":1,\"replicationFactor\":2,\"placement\":{\"strategy\":\"rendezvous\","
					+ "\"virtualNodes\":128},\"nodes\":[")
			.contains("{\"id\":\"" + cluster.url(2) + "\",\"url\":\"" + cluster.url(2) + "\",\"state\":\"normal\"}");
		assertThat(publicRing(1)).isEqualTo(first);
		assertThat(publicRing(2)).isEqualTo(first);
	}

	@Test
	@Order(2)
	void theStoredRingWinsOverTheSeedListAfterTheFirstStart() {
		String before = publicRing(2);
		cluster.stop(2);
		// Started with a seed list that names it alone: its ring still has three nodes.
		cluster.start(2, Map.of("quorumkv.cluster.nodes", cluster.url(2), "quorumkv.cluster.replication-factor", "1"));
		assertThat(publicRing(2)).isEqualTo(before);
	}

	@Test
	@Order(3)
	void aNodeBehindCatchesUpFromTheFirstCallOfANodeAhead() {
		ClusterState zero = cluster.bean(0, ClusterState.class);
		Ring current = zero.ring().orElseThrow();
		for (int node = 0; node < 3; node++) {
			assertThat(publicEpoch(node, "/v0/entity?id=before")).isEqualTo(Long.toString(current.epoch()));
		}
		Ring next = new Ring(current.clusterId(), current.epoch() + 1, current.replicationFactor(), current.strategy(),
				current.virtualNodes(), current.nodes(), null);
		assertThat(zero.install(next).block(Duration.ofSeconds(5))).isTrue();
		for (int i = 0; i < 20; i++) {
			cluster.client(0)
				.put()
				.uri(cluster.uri(0, "/v0/entity?id=after-" + i))
				.bodyValue("v".getBytes(StandardCharsets.UTF_8))
				.exchange()
				.expectStatus()
				.isCreated()
				// A public answer names the ring it was served under (a client behind
				// reads the ring again).
				.expectHeader()
				.valueEquals(EPOCH, Long.toString(next.epoch()));
		}
		eventually(Duration.ofSeconds(10), () -> {
			for (int node = 0; node < 3; node++) {
				assertThat(publicRing(node)).contains("\"epoch\":" + next.epoch() + ",");
				assertThat(publicEpoch(node, "/v0/entity?id=after-0")).isEqualTo(Long.toString(next.epoch()));
			}
		});
		assertThat(cluster.bean(1, ClusterState.class).ring()).contains(next);
	}

	@Test
	@Order(4)
	void aCallerBehindOrOfAnotherClusterIsRefusedAndToldWhy(CapturedOutput output) {
		Ring ring = cluster.bean(1, ClusterState.class).ring().orElseThrow();
		String behind = (ring.epoch() - 1) + " " + ring.clusterId() + " " + cluster.url(0) + " " + cluster.url(0);
		cluster.client(1)
			.post()
			.uri(cluster.uri(1, StreamCalls.PATH))
			.header(InternalApi.SECRET, TestCluster.SECRET)
			.header(InternalApi.RING, behind)
			.bodyValue(StreamCalls.get("k".getBytes()))
			.exchange()
			.expectStatus()
			.isEqualTo(409)
			.expectHeader()
			.valueMatches(InternalApi.RING, ring.epoch() + " " + ring.clusterId() + " .*")
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("stale ring"));
		String other = ring.epoch() + " qkv-another node-x http://127.0.0.1:1";
		cluster.client(1)
			.post()
			.uri(cluster.uri(1, StreamCalls.PATH))
			.header(InternalApi.SECRET, TestCluster.SECRET)
			.header(InternalApi.RING, other)
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.bodyValue(StreamCalls.get("k".getBytes()))
			.exchange()
			.expectStatus()
			.isEqualTo(409)
			.expectBody(String.class)
			.value((body) -> assertThat(body)
				.contains("of cluster qkv-another: this node belongs to cluster " + ring.clusterId()));
		assertThat(output.getOut()).contains("refused a call from http://127.0.0.1:1 (node node-x) of cluster "
				+ "qkv-another: this node belongs to cluster " + ring.clusterId());
	}

	@Test
	@Order(5)
	void aCoordinatorBehindItsReplicasTriesTheRequestAgainUnderTheirRing() {
		Ring current = cluster.bean(1, ClusterState.class).ring().orElseThrow();
		Ring next = new Ring(current.clusterId(), current.epoch() + 1, current.replicationFactor(), current.strategy(),
				current.virtualNodes(), current.nodes(), null);
		for (int node = 1; node < 3; node++) {
			assertThat(cluster.bean(node, ClusterState.class).install(next).block(Duration.ofSeconds(5))).isTrue();
		}
		ClusterState zero = cluster.bean(0, ClusterState.class);
		assertThat(zero.epoch()).isEqualTo(current.epoch());
		// Both replicas of every key are asked (2/2), and at least one of them is on the
		// newer ring: the first try is refused as stale, the second is placed under it.
		cluster.client(0)
			.put()
			.uri(cluster.uri(0, "/v0/entity?id=moved-on&replicas=2/2"))
			.bodyValue("v".getBytes(StandardCharsets.UTF_8))
			.exchange()
			.expectStatus()
			.isCreated();
		assertThat(zero.epoch()).isEqualTo(next.epoch());
		for (int node = 1; node < 3; node++) {
			assertThat(cluster.bean(node, ClusterState.class)
				.install(new Ring(next.clusterId(), next.epoch() + 1, next.replicationFactor(), next.strategy(),
						next.virtualNodes(), next.nodes(), null))
				.block(Duration.ofSeconds(5))).isTrue();
		}
		assertThat(zero.epoch()).isEqualTo(next.epoch());
		cluster.client(0)
			.get()
			.uri(cluster.uri(0, "/v0/entity?id=moved-on&replicas=2/2"))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.isEqualTo("v");
		assertThat(zero.epoch()).isEqualTo(next.epoch() + 1);
	}

	@Test
	@Order(6)
	void aNewcomerServesNoDataUntilItIsJoined(@TempDir Path newcomerRoot) {
		try (TestCluster newcomer = new TestCluster(newcomerRoot, 1,
				Map.of("quorumkv.cluster.nodes", cluster.url(0) + "," + cluster.url(1)))) {
			newcomer.start(0);
			newcomer.client(0).get().uri("/v0/ring").exchange().expectStatus().isEqualTo(503);
			newcomer.client(0)
				.get()
				.uri("/v0/entity?id=k")
				.exchange()
				.expectStatus()
				.isEqualTo(503)
				.expectBody(String.class)
				.value((body) -> assertThat(body).contains("not a member of a cluster yet"));
			// No ring, no epoch on its answers.
			newcomer.client(0)
				.get()
				.uri("/v0/status")
				.exchange()
				.expectStatus()
				.isOk()
				.expectHeader()
				.doesNotExist(EPOCH);
		}
	}

	@Test
	@Order(7)
	void aNewcomerTakesTheRingOfACallerThatListsIt(@TempDir Path newcomerRoot, CapturedOutput output) {
		try (TestCluster newcomer = new TestCluster(newcomerRoot, 1,
				Map.of("quorumkv.cluster.nodes", cluster.url(0) + "," + cluster.url(1)))) {
			newcomer.start(0);
			ClusterState state = newcomer.bean(0, ClusterState.class);
			Ring current = cluster.bean(0, ClusterState.class).ring().orElseThrow();
			// A caller whose ring does not list the newcomer: nothing adopted, a 503.
			internalGet(newcomer, current.epoch(), current.clusterId(), 1).expectStatus()
				.isEqualTo(503)
				.expectBody(String.class)
				.value((body) -> assertThat(body).contains("not a member of a cluster yet")
					.contains("without this node: not adopted"));
			assertThat(state.ring()).isEmpty();
			// The ring of a change that brings the newcomer in, adopted by a member (its
			// commit) before the newcomer's own commit came: the member's call hands it
			// over.
			List<RingNode> nodes = new ArrayList<>(current.nodes());
			nodes.add(new RingNode(state.self().id(), URI.create(newcomer.url(0)), NodeState.NORMAL));
			Ring next = new Ring(current.clusterId(), current.epoch() + 1, current.replicationFactor(),
					current.strategy(), current.virtualNodes(), nodes, null);
			assertThat(cluster.bean(0, ClusterState.class).install(next).block(Duration.ofSeconds(5))).isTrue();
			byte[] answer = internalGet(newcomer, next.epoch(), next.clusterId(), 0).expectStatus()
				.isOk()
				.expectHeader()
				.valueMatches(InternalApi.RING, next.epoch() + " " + next.clusterId() + " .*")
				.expectBody(byte[].class)
				.returnResult()
				.getResponseBody();
			assertThat(StreamCalls.result(answer).type()).isEqualTo(StreamFrames.ABSENT);
			assertThat(state.epoch()).isEqualTo(next.epoch());
			assertThat(output.getOut()).contains("Catching up from " + cluster.url(0) + ": epoch 0 -> " + next.epoch());
		}
	}

	/**
	 * An internal read of a key at the newcomer, stamped as a call of member
	 * {@code from}.
	 */
	private static WebTestClient.ResponseSpec internalGet(TestCluster newcomer, long epoch, String clusterId,
			int from) {
		return newcomer.client(0)
			.post()
			.uri(newcomer.uri(0, StreamCalls.PATH))
			.header(InternalApi.SECRET, TestCluster.SECRET)
			.header(InternalApi.RING, epoch + " " + clusterId + " " + cluster.url(from) + " " + cluster.url(from))
			.bodyValue(StreamCalls.get("k".getBytes()))
			.exchange();
	}

	/** The ring epoch a public answer of {@code node} to a GET of {@code path} names. */
	private static String publicEpoch(int node, String path) {
		return cluster.client(node)
			.get()
			.uri(path)
			.exchange()
			.expectBody()
			.returnResult()
			.getResponseHeaders()
			.getFirst(EPOCH);
	}

	private static String publicRing(int node) {
		return cluster.client(node)
			.get()
			.uri("/v0/ring")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.contentType(MediaType.APPLICATION_JSON)
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
	}

}
