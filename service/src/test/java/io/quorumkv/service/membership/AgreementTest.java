package io.quorumkv.service.membership;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.replication.InternalApi;
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

/**
 * The agreement attacked on real nodes in this JVM (three seeds, RF 2, two newcomers): a
 * proposal against a stale epoch is refused; two operators proposing at once end with one
 * change applied; a node of another cluster is refused and says why; a participant
 * holding a prepared proposal whose coordinator went quiet refuses every other change
 * until it learns the outcome, then lets the next one through.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(OutputCaptureExtension.class)
class AgreementTest {

	@TempDir
	static Path root;

	static TestCluster cluster;

	@BeforeAll
	static void start() {
		cluster = new TestCluster(root, 5,
				Map.of("quorumkv.cluster.replication-factor", "2", "management.endpoints.web.exposure.include",
						"health,quorumkv", "quorumkv.cluster.membership.lease", "1s",
						"quorumkv.cluster.membership.poll-interval", "200ms"));
		String seeds = cluster.url(0) + "," + cluster.url(1) + "," + cluster.url(2);
		for (int node = 0; node < 5; node++) {
			cluster.start(node, Map.of("quorumkv.cluster.nodes", seeds));
		}
	}

	@AfterAll
	static void stop() {
		cluster.close();
	}

	@Test
	@Order(1)
	void aProposalAgainstAStaleEpochIsRefusedByEveryParticipant() {
		Ring ring = ring(1);
		Ring next = ring.join(Node.of("node-x", "http://127.0.0.1:1"), "stale-change", cluster.url(0));
		Proposal stale = new Proposal(
				"stale-1", ring.epoch() - 1, new Ring(next.clusterId(), ring.epoch(), next.replicationFactor(),
						next.strategy(), next.virtualNodes(), next.nodes(), next.change()),
				Node.of(cluster.url(0)), System.currentTimeMillis());
		String answer = post(1, InternalApi.RING_PREPARE_PATH, stale.toJson(), 409);
		assertThat(answer).contains(
				"stale proposal: made against epoch " + (ring.epoch() - 1) + ", this node is at epoch " + ring.epoch());
		String operator = admin(0, "join", "{\"url\":\"" + cluster.url(3) + "\",\"epoch\":0}", 409);
		assertThat(operator).contains("stale");
		assertThat(ring(1).epoch()).isEqualTo(ring.epoch());
	}

	@Test
	@Order(2)
	void twoOperatorsProposingAtOnceEndWithOneChangeApplied() throws Exception {
		long epoch = ring(0).epoch();
		CountDownLatch go = new CountDownLatch(1);
		CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
			await(go);
			return answer(0, "join", "{\"url\":\"" + cluster.url(3) + "\"}");
		});
		CompletableFuture<String> second = CompletableFuture.supplyAsync(() -> {
			await(go);
			return answer(1, "join", "{\"url\":\"" + cluster.url(4) + "\"}");
		});
		go.countDown();
		List<String> answers = List.of(first.get(), second.get());
		System.out.println("AgreementTest concurrent proposals: " + answers);
		assertThat(answers).filteredOn((a) -> a.startsWith("200")).hasSize(1);
		assertThat(answers).filteredOn((a) -> a.startsWith("409")).hasSize(1);
		eventually(Duration.ofSeconds(60), () -> {
			for (int node = 0; node < 3; node++) {
				Ring ring = ring(node);
				assertThat(ring.epoch()).isEqualTo(epoch + 3);
				assertThat(ring.change()).isNull();
			}
		});
		Ring ring = ring(0);
		boolean three = ring.isMember(cluster.bean(3, ClusterState.class).self().id());
		boolean four = ring.isMember(cluster.bean(4, ClusterState.class).self().id());
		assertThat(three ^ four).as("exactly one newcomer joined: %s", ring.describe()).isTrue();
	}

	@Test
	@Order(3)
	void aNodeOfAnotherClusterIsRefusedAndSaysWhy(@TempDir Path otherRoot, CapturedOutput output) {
		try (TestCluster other = new TestCluster(otherRoot, 1, Map.of())) {
			other.start(0);
			String otherCluster = other.bean(0, ClusterState.class).ring().orElseThrow().clusterId();
			String answer = admin(0, "join", "{\"url\":\"" + other.url(0) + "\"}", 409);
			assertThat(answer).contains(other.url(0) + " belongs to cluster " + otherCluster)
				.contains("a node of another cluster cannot join");
			assertThat(output.getOut()).contains(
					"Refused to join " + other.url(0) + ": " + other.url(0) + " belongs to cluster " + otherCluster);
		}
	}

	@Test
	@Order(4)
	void aPreparedProposalWhoseCoordinatorWentQuietBlocksOtherChangesUntilResolved() {
		Ring ring = ring(1);
		String newcomer = ring.isMember(cluster.bean(3, ClusterState.class).self().id()) ? cluster.url(4)
				: cluster.url(3);
		// Node 1 prepares a proposal "coordinated" by node 2, which never heard of it (as
		// when a coordinator dies between its prepares and restarts).
		Ring orphan = ring.decommission(cluster.url(0), "orphan-change", cluster.url(2));
		Proposal proposal = new Proposal("orphan-1", ring.epoch(), orphan, Node.of(cluster.url(2)),
				System.currentTimeMillis());
		post(1, InternalApi.RING_PREPARE_PATH, proposal.toJson(), 200);
		String blocked = admin(0, "join", "{\"url\":\"" + newcomer + "\"}", 409);
		assertThat(blocked).contains("busy: this node has prepared proposal orphan-1");
		// After the lease, node 1 asks node 2, learns the proposal is unknown there, and
		// drops it: the next change goes through, and the orphan never applied.
		eventually(Duration.ofSeconds(30), () -> assertThat(cluster.bean(1, Participant.class).pending()).isEmpty());
		admin(0, "join", "{\"url\":\"" + newcomer + "\"}", 200);
		eventually(Duration.ofSeconds(60), () -> assertThat(ring(1).change()).isNull());
		assertThat(ring(1).isMember(cluster.url(0))).isTrue();
		assertThat(ring(1).change()).isNull();
		assertThat(ring(2).change()).isNull();
	}

	private static Ring ring(int node) {
		return cluster.bean(node, ClusterState.class).ring().orElseThrow();
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static String answer(int node, String action, String json) {
		var result = cluster.adminClient(node)
			.post()
			.uri("/actuator/quorumkv/" + action)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(json)
			.exchange()
			.expectBody(String.class)
			.returnResult();
		return result.getStatus().value() + " " + result.getResponseBody();
	}

	private static String admin(int node, String action, String json, int status) {
		String answer = answer(node, action, json);
		assertThat(answer).startsWith(status + " ");
		return answer;
	}

	private static String post(int node, String path, String json, int status) {
		return TestCluster.body(cluster.client(node)
			.post()
			.uri(path)
			.header(InternalApi.SECRET, TestCluster.SECRET)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(json), status);
	}

}
