package io.quorumkv.service.membership;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.metadata.MetadataGroup;
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
 * Membership changes as entries of the metadata log, on real nodes in this JVM (three
 * seeds, RF 2, two newcomers): a change asked against a stale epoch is refused; two
 * operators asking at once end with one change applied and the other refused with the
 * epoch it lost to; a node of another cluster is refused and says why; the metadata
 * group's leader, whichever node it is, carries the change to its end and gives the
 * newcomer the group; with five normal nodes, all five vote; shrinking to four and three
 * nodes (the second time by decommissioning the leader), the smallest three ids vote and
 * the others listen.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(OutputCaptureExtension.class)
class MembershipLogTest {

	@TempDir
	static Path root;

	static TestCluster cluster;

	@BeforeAll
	static void start() {
		cluster = new TestCluster(root, 5,
				Map.of("quorumkv.cluster.replication-factor", "2", "management.endpoints.web.exposure.include",
						"health,quorumkv", "quorumkv.cluster.membership.poll-interval", "200ms"));
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
	void aChangeAskedAgainstAStaleEpochIsRefused() {
		Ring ring = ring(1);
		String operator = admin(0, "join", "{\"url\":\"" + cluster.url(3) + "\",\"epoch\":0}", 409);
		assertThat(operator).contains("stale").contains("the ring is at epoch " + ring.epoch());
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
		System.out.println("MembershipLogTest concurrent proposals: " + answers);
		assertThat(answers).filteredOn((a) -> a.startsWith("200")).hasSize(1);
		assertThat(answers).filteredOn((a) -> a.startsWith("409"))
			.singleElement()
			.asString()
			.contains("epoch " + (epoch + 1));
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
	void theLeaderCarriesAChangeAskedOfAnotherNodeToItsEndAndGivesTheNewcomerTheGroup() {
		Ring ring = ring(1);
		int newcomer = ring.isMember(cluster.bean(3, ClusterState.class).self().id()) ? 4 : 3;
		int asked = List.of(0, 1, 2)
			.stream()
			.filter((node) -> !cluster.bean(node, MetadataGroup.class).leads())
			.findFirst()
			.orElseThrow();
		admin(asked, "join", "{\"url\":\"" + cluster.url(newcomer) + "\"}", 200);
		eventually(Duration.ofSeconds(60), () -> {
			for (int node : List.of(0, 1, 2, newcomer)) {
				assertThat(ring(node).epoch()).as("node %d", node).isEqualTo(ring.epoch() + 3);
				assertThat(ring(node).change()).isNull();
			}
		});
		// The newcomer learned every ring from the log: it is a member of the group.
		eventually(Duration.ofSeconds(30), () -> assertThat(cluster.bean(newcomer, MetadataGroup.class).logged())
			.hasValueSatisfying((logged) -> assertThat(logged.epoch()).isEqualTo(ring.epoch() + 3)));
		// Five normal nodes now: all five vote (they were three voters and listeners), as
		// every node's view of the group says.
		List<String> five = ring(0).nodes().stream().map(RingNode::id).sorted().toList();
		assertThat(five).hasSize(5);
		eventually(Duration.ofSeconds(60), () -> {
			for (int node = 0; node < 5; node++) {
				assertThat(cluster.bean(node, MetadataGroup.class).view().get("voters")).as("node %d", node)
					.isEqualTo(five);
				assertThat(cluster.bean(node, MetadataGroup.class).view().get("listeners")).as("node %d", node)
					.isEqualTo(List.of());
			}
		});
	}

	@Test
	@Order(5)
	void shrinkingToFourAndThreeNodesKeepsTheIntendedVoters() {
		List<Integer> live = new ArrayList<>(List.of(0, 1, 2, 3, 4));
		// 5 -> 4: the member of the smallest id (a voter) leaves; the three smallest of
		// the
		// four left vote, the fourth listens.
		int first = live.stream().min(Comparator.comparing(MembershipLogTest::id)).orElseThrow();
		decommission(first, live);
		assertVoters(live, 3);
		// 4 -> 3: the group's leader leaves, asked of another node: the change goes on
		// under the next leader, and the three left all vote.
		int leader = eventuallyTheLeader(live);
		decommission(leader, live);
		assertVoters(live, 3);
	}

	private static void decommission(int leaving, List<Integer> live) {
		long epoch = ring(live.getFirst()).epoch();
		int asked = live.stream().filter((node) -> node != leaving).findFirst().orElseThrow();
		admin(asked, "decommission", "{\"url\":\"" + cluster.url(leaving) + "\"}", 200);
		live.remove(Integer.valueOf(leaving));
		eventually(Duration.ofSeconds(60), () -> {
			for (int node : live) {
				assertThat(ring(node).epoch()).as("node %d", node).isGreaterThanOrEqualTo(epoch + 3);
				assertThat(ring(node).change()).as("node %d", node).isNull();
				assertThat(ring(node).isMember(id(leaving))).as("node %d", node).isFalse();
			}
		});
	}

	/** Every live node's view: the {@code count} smallest ids vote, the others listen. */
	private static void assertVoters(List<Integer> live, int count) {
		List<String> ids = live.stream().map(MembershipLogTest::id).sorted().toList();
		eventually(Duration.ofSeconds(60), () -> {
			for (int node : live) {
				Map<String, Object> view = cluster.bean(node, MetadataGroup.class).view();
				assertThat(view.get("voters")).as("voters seen by node %d", node).isEqualTo(ids.subList(0, count));
				assertThat(view.get("listeners")).as("listeners seen by node %d", node)
					.isEqualTo(ids.subList(count, ids.size()));
			}
		});
	}

	private static int eventuallyTheLeader(List<Integer> live) {
		int[] leader = new int[1];
		eventually(Duration.ofSeconds(30), () -> {
			List<Integer> leaders = live.stream()
				.filter((node) -> cluster.bean(node, MetadataGroup.class).leads())
				.toList();
			assertThat(leaders).hasSize(1);
			leader[0] = leaders.getFirst();
		});
		return leader[0];
	}

	private static String id(int node) {
		return cluster.bean(node, ClusterState.class).self().id();
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

}
