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
import io.quorumkv.service.support.MetadataCluster;
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

	static MetadataCluster metadata;

	static TestCluster cluster;

	@BeforeAll
	static void start() {
		metadata = MetadataCluster.create(root, 5,
				MetadataCluster.operated(Map.of("quorumkv.cluster.membership.poll-interval", "200ms")));
		cluster = metadata.nodes();
		String seeds = cluster.url(0) + "," + cluster.url(1) + "," + cluster.url(2);
		for (int node = 0; node < 5; node++) {
			cluster.start(node, Map.of("quorumkv.cluster.nodes", seeds));
		}
	}

	@AfterAll
	static void stop() {
		metadata.close();
	}

	@Test
	@Order(1)
	void aChangeAskedAgainstAStaleEpochIsRefused() {
		Ring ring = metadata.ring(1);
		String operator = metadata.admin(0, "join", "{\"url\":\"" + cluster.url(3) + "\",\"epoch\":0}", 409);
		assertThat(operator).contains("stale").contains("the ring is at epoch " + ring.epoch());
		assertThat(metadata.ring(1).epoch()).isEqualTo(ring.epoch());
	}

	@Test
	@Order(2)
	void twoOperatorsProposingAtOnceEndWithOneChangeApplied() throws Exception {
		long epoch = metadata.ring(0).epoch();
		CountDownLatch go = new CountDownLatch(1);
		CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
			await(go);
			return metadata.answer(0, "join", "{\"url\":\"" + cluster.url(3) + "\"}");
		});
		CompletableFuture<String> second = CompletableFuture.supplyAsync(() -> {
			await(go);
			return metadata.answer(1, "join", "{\"url\":\"" + cluster.url(4) + "\"}");
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
				Ring ring = metadata.ring(node);
				assertThat(ring.epoch()).isEqualTo(epoch + 3);
				assertThat(ring.change()).isNull();
			}
		});
		Ring ring = metadata.ring(0);
		boolean three = ring.isMember(metadata.id(3));
		boolean four = ring.isMember(metadata.id(4));
		assertThat(three ^ four).as("exactly one newcomer joined: %s", ring.describe()).isTrue();
	}

	@Test
	@Order(3)
	void aNodeOfAnotherClusterIsRefusedAndSaysWhy(@TempDir Path otherRoot, CapturedOutput output) {
		try (TestCluster other = new TestCluster(otherRoot, 1, Map.of())) {
			other.start(0);
			String otherCluster = other.bean(0, ClusterState.class).ring().orElseThrow().clusterId();
			String answer = metadata.admin(0, "join", "{\"url\":\"" + other.url(0) + "\"}", 409);
			assertThat(answer).contains(other.url(0) + " belongs to cluster " + otherCluster)
				.contains("a node of another cluster cannot join");
			assertThat(output.getOut()).contains(
					"Refused to join " + other.url(0) + ": " + other.url(0) + " belongs to cluster " + otherCluster);
		}
	}

	@Test
	@Order(4)
	void theLeaderCarriesAChangeAskedOfAnotherNodeToItsEndAndGivesTheNewcomerTheGroup() {
		Ring ring = metadata.ring(1);
		int newcomer = ring.isMember(metadata.id(3)) ? 4 : 3;
		int asked = List.of(0, 1, 2).stream().filter((node) -> !metadata.group(node).leads()).findFirst().orElseThrow();
		metadata.admin(asked, "join", "{\"url\":\"" + cluster.url(newcomer) + "\"}", 200);
		eventually(Duration.ofSeconds(60), () -> {
			for (int node : List.of(0, 1, 2, newcomer)) {
				assertThat(metadata.ring(node).epoch()).as("node %d", node).isEqualTo(ring.epoch() + 3);
				assertThat(metadata.ring(node).change()).isNull();
			}
		});
		// The newcomer learned every ring from the log: it is a member of the group.
		eventually(Duration.ofSeconds(30), () -> assertThat(metadata.group(newcomer).logged())
			.hasValueSatisfying((logged) -> assertThat(logged.epoch()).isEqualTo(ring.epoch() + 3)));
		// Five normal nodes now: all five vote (they were three voters and listeners), as
		// every node's view of the group says.
		List<String> five = metadata.ring(0).nodes().stream().map(RingNode::id).sorted().toList();
		assertThat(five).hasSize(5);
		eventually(Duration.ofSeconds(60), () -> {
			for (int node = 0; node < 5; node++) {
				assertThat(metadata.group(node).view().get("voters")).as("node %d", node).isEqualTo(five);
				assertThat(metadata.group(node).view().get("listeners")).as("node %d", node).isEqualTo(List.of());
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
		int first = live.stream().min(Comparator.comparing(metadata::id)).orElseThrow();
		decommission(first, live);
		assertVoters(live, 3);
		// 4 -> 3: the group's leader leaves, asked of another node: the change goes on
		// under the next leader, and the three left all vote.
		int leader = metadata.leader(live);
		decommission(leader, live);
		assertVoters(live, 3);
	}

	private static void decommission(int leaving, List<Integer> live) {
		long epoch = metadata.ring(live.getFirst()).epoch();
		int asked = live.stream().filter((node) -> node != leaving).findFirst().orElseThrow();
		metadata.admin(asked, "decommission", "{\"url\":\"" + cluster.url(leaving) + "\"}", 200);
		live.remove(Integer.valueOf(leaving));
		eventually(Duration.ofSeconds(60), () -> {
			for (int node : live) {
				assertThat(metadata.ring(node).epoch()).as("node %d", node).isGreaterThanOrEqualTo(epoch + 3);
				assertThat(metadata.ring(node).change()).as("node %d", node).isNull();
				assertThat(metadata.ring(node).isMember(metadata.id(leaving))).as("node %d", node).isFalse();
			}
		});
	}

	/** Every live node's view: the {@code count} smallest ids vote, the others listen. */
	private static void assertVoters(List<Integer> live, int count) {
		List<String> ids = live.stream().map(metadata::id).sorted().toList();
		eventually(Duration.ofSeconds(60), () -> {
			for (int node : live) {
				Map<String, Object> view = metadata.group(node).view();
				assertThat(view.get("voters")).as("voters seen by node %d", node).isEqualTo(ids.subList(0, count));
				assertThat(view.get("listeners")).as("listeners seen by node %d", node)
					.isEqualTo(ids.subList(count, ids.size()));
			}
		});
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
