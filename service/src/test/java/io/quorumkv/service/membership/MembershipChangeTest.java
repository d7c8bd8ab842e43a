package io.quorumkv.service.membership;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.ClusterStates;
import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
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

/**
 * Real nodes in this JVM through whole membership changes: a newcomer joins three nodes
 * (RF 2), then one of the four is decommissioned; after each change every key reads back
 * and lives on exactly RF nodes, and a stale or concurrent proposal is refused.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(OutputCaptureExtension.class)
class MembershipChangeTest {

	static final int KEYS = 300;

	private static final Pattern INSTANT = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T[0-9:.]+Z");

	@TempDir
	static Path root;

	static TestCluster cluster;

	static String seeds;

	static String newcomerId;

	@BeforeAll
	static void start() {
		cluster = new TestCluster(root, 4,
				Map.of("quorumkv.cluster.replication-factor", "2", "management.endpoints.web.exposure.include",
						"health,quorumkv", "quorumkv.cluster.membership.poll-interval", "200ms",
						"quorumkv.cluster.membership.cleanup-rate", "1000"));
		seeds = cluster.url(0) + "," + cluster.url(1) + "," + cluster.url(2);
		for (int node = 0; node < 3; node++) {
			cluster.start(node, Map.of("quorumkv.cluster.nodes", seeds));
		}
		// The newcomer's id sorts between the first two members', so that the member
		// after it in the clean-ups' order waits, through it, for the one before it.
		List<String> ids = ring(0).nodes().stream().map(RingNode::id).sorted().toList();
		newcomerId = ids.getFirst() + "-newcomer";
		assertThat(newcomerId).isGreaterThan(ids.get(0)).isLessThan(ids.get(1));
		ClusterStates.writeNodeId(root.resolve("node3"), newcomerId);
		cluster.start(3, Map.of("quorumkv.cluster.nodes", seeds));
		cluster.putKeys(KEYS, 0, 1, 2);
	}

	@AfterAll
	static void stop() {
		cluster.close();
	}

	@Test
	@Order(1)
	void aNewcomerJoinsAndTakesItsShare(CapturedOutput output) {
		// The clean-up gauges, sampled from now until the clean-ups after the change end.
		CleanupGauges gauges = new CleanupGauges();
		String answer = admin(0, "join", "{\"url\":\"" + cluster.url(3) + "\"}", 200);
		assertThat(answer).contains("\"kind\":\"join\"").contains("\"epoch\":2");
		awaitNoChange(List.of(0, 1, 2, 3), 4);
		assertEveryKeyReadsBackAndLivesOnExactly(2, List.of(0, 1, 2, 3));
		assertThat(held(3)).as("the newcomer's share of %d keys at RF 2 over 4 nodes", KEYS).isBetween(100, 200);
		// stream-sources 1 (the default): the newcomer pulls from its three sources one
		// after the other, each stream starting once the one before it is complete.
		List<String> transfers = output.getOut()
			.lines()
			.filter((line) -> line.contains("Pulling the keys of change") || line.contains("Transfer of change"))
			.map((line) -> line.contains("Pulling") ? "pull" : "complete")
			.toList();
		assertThat(transfers).containsExactly("pull", "complete", "pull", "complete", "pull", "complete");
		// The newcomer joined with an empty storage: it skips its clean-up (it holds only
		// keys it owns, as the count above shows). Every other member cleans up after the
		// change, at the configured rate, one at a time: each starts once the one before
		// it (by id) has finished. Sorted, the n-th start comes no earlier than the
		// (n-1)-th end exactly when no two overlap. (A change may begin while a member
		// cleans up, which then keeps the rest: CleanupTest. Here the last one has ended
		// before the next test's change.)
		eventually(Duration.ofSeconds(30),
				() -> assertThat(
						output.getOut().lines().filter((line) -> line.contains("Cleanup under epoch 4 removed")))
					.hasSize(3));
		assertThat(output.getOut().lines().filter((line) -> line.contains("Cleanup under epoch 4 skipped"))).hasSize(1);
		assertThat(ring(0).node(newcomerId)).as("the newcomer, by the id it was given").isPresent();
		assertThat(cluster.bean(3, Cleanup.class).status().get("last")).asString().contains("skipped");
		for (int node = 0; node < 3; node++) {
			assertThat(cluster.bean(node, Cleanup.class).status().get("last")).asString()
				.as("node %d", node)
				.doesNotContain("skipped");
		}
		// Meanwhile the gauges showed members waiting for their turn and running; now
		// none does.
		gauges.stop();
		assertThat(gauges.sawWaiting).as("a member's clean-up seen waiting for its turn").isTrue();
		assertThat(gauges.sawRunning).as("a member's clean-up seen running").isTrue();
		eventually(Duration.ofSeconds(5), () -> {
			for (int node = 0; node < 4; node++) {
				assertThat(cleanupGauge(node, "waiting") + cleanupGauge(node, "running")).as("node %d", node).isZero();
			}
		});
		List<Instant> starts = logged(output,
				"Cleanup: removing the keys this node does not own under epoch 4, looking at 1000 entries a second");
		List<Instant> ends = logged(output, "Cleanup under epoch 4 removed");
		assertThat(starts).hasSize(3);
		for (int i = 1; i < starts.size(); i++) {
			assertThat(starts.get(i)).as("clean-ups started %s and ended %s", starts, ends)
				.isAfterOrEqualTo(ends.get(i - 1));
		}
	}

	/** Samples every member's clean-up gauges every 25 ms (for at most a minute). */
	private static final class CleanupGauges {

		volatile boolean sawWaiting;

		volatile boolean sawRunning;

		private volatile boolean stopped;

		private final Thread sampler = Thread.ofPlatform().daemon().start(() -> {
			long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
			while (!this.stopped && System.nanoTime() < deadline) {
				for (int node = 0; node < 4; node++) {
					this.sawWaiting |= cleanupGauge(node, "waiting") == 1;
					this.sawRunning |= cleanupGauge(node, "running") == 1;
				}
				LockSupport.parkNanos(25_000_000);
			}
		});

		void stop() {
			this.stopped = true;
			try {
				this.sampler.join(5_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	private static double cleanupGauge(int node, String name) {
		return cluster.bean(node, MeterRegistry.class).get("quorumkv.membership.cleanup." + name).gauge().value();
	}

	/** When the lines containing {@code text} were logged, in order of time. */
	private static List<Instant> logged(CapturedOutput output, String text) {
		return output.getOut().lines().filter((line) -> line.contains(text)).map((line) -> {
			// Plain or structured (JSON) logs: the line's first ISO instant.
			Matcher instant = INSTANT.matcher(line);
			assertThat(instant.find()).as("a time in %s", line).isTrue();
			return Instant.parse(instant.group());
		}).sorted().toList();
	}

	@Test
	@Order(2)
	void aStaleOrConcurrentProposalIsRefused() {
		String stale = admin(1, "decommission", "{\"url\":\"" + cluster.url(2) + "\",\"epoch\":1}", 409);
		assertThat(stale).contains("stale");
		assertThat(ring(1).epoch()).isEqualTo(4);
	}

	@Test
	@Order(3)
	void aDecommissionedNodeStreamsItsKeysAwayAndLeaves() {
		assertThat(cluster.readiness(2)).isEqualTo(200);
		admin(1, "decommission", "{\"url\":\"" + cluster.url(2) + "\"}", 200);
		// The leaving node coordinates requests until its decommission ends, and its
		// readiness says it is going from the start.
		List<String> refused = new ArrayList<>();
		int whileLeaving = 0;
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		NodeState before = stateOf(2);
		for (int i = 0; before != NodeState.REMOVED && System.nanoTime() < deadline; i++) {
			int status = cluster.client(2)
				.put()
				.uri("/v0/entity?id=leaving-" + i)
				.bodyValue(("value-" + i).getBytes(StandardCharsets.UTF_8))
				.exchange()
				.returnResult(Void.class)
				.getStatus()
				.value();
			int ready = cluster.readiness(2);
			NodeState after = stateOf(2);
			if (after != NodeState.REMOVED) {
				if (status != 201) {
					refused.add("leaving-" + i + " answered " + status + " (" + before + " -> " + after + ")");
				}
				if (before == NodeState.LEAVING && after == NodeState.LEAVING) {
					whileLeaving++;
					if (ready != 503) {
						refused.add("readiness " + ready + " while leaving");
					}
				}
			}
			before = after;
		}
		System.out.println("MembershipChangeTest: " + whileLeaving + " writes through the leaving node while leaving");
		assertThat(refused).isEmpty();
		awaitNoChange(List.of(0, 1, 3), 7);
		assertEveryKeyReadsBackAndLivesOnExactly(2, List.of(0, 1, 3));
		cluster.client(2).get().uri("/v0/entity?id=key-1").exchange().expectStatus().isEqualTo(503);
		assertThat(cluster.readiness(2)).isEqualTo(503);
		assertThat(cluster.readiness(0)).isEqualTo(200);
	}

	private static NodeState stateOf(int node) {
		Ring ring = ring(node);
		return ring.node(cluster.bean(node, ClusterState.class).self().id())
			.map(RingNode::state)
			.orElse(NodeState.REMOVED);
	}

	@Test
	@Order(4)
	void aTransferAsksForAPositiveWholeRate() {
		Ring ring = ring(0);
		String callerId = ring.nodes()
			.stream()
			.filter((node) -> node.url().toString().equals(cluster.url(1)))
			.findFirst()
			.orElseThrow()
			.id();
		String caller = ring.epoch() + " " + ring.clusterId() + " " + callerId + " " + cluster.url(1);
		for (String rate : List.of("0", "-1", "1.5", "abc", "", "1000000000001")) {
			String answer = transfer(0, caller, "?change=c&rate=" + rate, 400);
			assertThat(answer).as("rate=%s", rate).contains("rate must be a whole number of bytes per second");
		}
		// A valid rate reaches the source, which has no change under way.
		assertThat(transfer(0, caller, "?change=c&rate=1000000", 409)).contains("not streaming here");
	}

	private static String transfer(int node, String caller, String query, int status) {
		return TestCluster.body(cluster.client(node)
			.get()
			.uri(InternalApi.TRANSFER_PATH + query)
			.header(InternalApi.SECRET, TestCluster.SECRET)
			.header(InternalApi.RING, caller), status);
	}

	private static void awaitNoChange(List<Integer> nodes, long epoch) {
		eventually(Duration.ofSeconds(60), () -> {
			for (int node : nodes) {
				Ring ring = ring(node);
				assertThat(ring.epoch()).as("epoch of node %d", node).isEqualTo(epoch);
				assertThat(ring.change()).isNull();
			}
		});
	}

	private static void assertEveryKeyReadsBackAndLivesOnExactly(int copies, List<Integer> nodes) {
		eventually(Duration.ofSeconds(30), () -> {
			List<String> wrong = new ArrayList<>();
			for (int i = 0; i < KEYS; i++) {
				int holders = 0;
				for (int node : nodes) {
					if (cluster.localValue(node, "key-" + i) != null) {
						holders++;
					}
				}
				if (holders != copies) {
					wrong.add("key-" + i + " on " + holders);
				}
			}
			assertThat(wrong).as("keys not on exactly %d nodes", copies).isEmpty();
		});
		cluster.expectKeys(KEYS, nodes.stream().mapToInt(Integer::intValue).toArray());
	}

	private static int held(int node) {
		int held = 0;
		for (int i = 0; i < KEYS; i++) {
			if (cluster.localValue(node, "key-" + i) != null) {
				held++;
			}
		}
		return held;
	}

	private static Ring ring(int node) {
		return cluster.bean(node, ClusterState.class).ring().orElseThrow();
	}

	private static String admin(int node, String action, String json, int status) {
		return TestCluster.body(cluster.adminClient(node)
			.post()
			.uri("/actuator/quorumkv/" + action)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(json), status);
	}

}
