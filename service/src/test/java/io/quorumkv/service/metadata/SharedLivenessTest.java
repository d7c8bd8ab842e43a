package io.quorumkv.service.metadata;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shared view of who is up, on three real nodes in this JVM: a follower of the
 * metadata group stops; the two others mark it down and, writing around it, open their
 * breakers toward it; it starts again and, with no request through it, no hint delivered
 * (the delivery waits a minute) and breakers that would stay open a minute on their own,
 * both others see it up and close their breakers toward it within a heartbeat or two of
 * the leader hearing it.
 */
class SharedLivenessTest {

	/** Goal: a second; a shared two-core machine gets some slack. */
	private static final Duration MARKED_UP = Duration.ofSeconds(3);

	@TempDir
	Path root;

	private TestCluster cluster;

	@AfterEach
	void stop() {
		if (this.cluster != null) {
			this.cluster.close();
		}
	}

	@Test
	void aReturningNodeIsSeenUpByEveryNodeAndItsBreakersClose() {
		this.cluster = new TestCluster(this.root, 3, Map.of("quorumkv.cluster.replication-factor", "3",
				"quorumkv.cluster.breaker.wait-in-open", "60s", "quorumkv.cluster.hints.delivery-interval", "60s"))
			.startAll();
		int leader = awaitLeader();
		int returning = (leader + 1) % 3;
		List<Integer> others = IntStream.range(0, 3).filter((n) -> n != returning).boxed().toList();
		String id = this.cluster.bean(returning, ClusterState.class).self().id();
		Node node = Node.of(id, this.cluster.url(returning));
		eventually(Duration.ofSeconds(10), () -> others
			.forEach((n) -> assertThat(liveness(n).of(id)).as("node %d's view", n).containsEntry("up", true)));

		this.cluster.stop(returning);
		int written = 0;
		long writing = System.nanoTime();
		while (others.stream().anyMatch((n) -> breaker(n, node) != CircuitBreaker.State.OPEN)) {
			assertThat(System.nanoTime() - writing).as("breakers toward the stopped node open")
				.isLessThan(Duration.ofSeconds(30).toNanos());
			int through = others.get(written % 2);
			this.cluster.client(through)
				.put()
				.uri("/v0/entity?id=around-" + written + "&replicas=2/3")
				.bodyValue("v".getBytes(StandardCharsets.UTF_8))
				.exchange()
				.expectStatus()
				.isCreated();
			written++;
		}
		eventually(Duration.ofSeconds(10), () -> others
			.forEach((n) -> assertThat(liveness(n).of(id)).as("node %d's view", n).containsEntry("up", false)));

		this.cluster.start(returning);
		long started = System.nanoTime();
		eventually(MARKED_UP, () -> others.forEach((n) -> {
			assertThat(liveness(n).of(id)).as("node %d's view", n).containsEntry("up", true);
			assertThat(breaker(n, node)).as("node %d's breaker", n).isEqualTo(CircuitBreaker.State.CLOSED);
		}));
		System.out.printf("shared liveness: node %d seen up by every node %d ms after it started%n", returning,
				Duration.ofNanos(System.nanoTime() - started).toMillis());
	}

	private int awaitLeader() {
		int[] leader = { -1 };
		eventually(Duration.ofSeconds(20), () -> {
			leader[0] = IntStream.range(0, 3)
				.filter((n) -> this.cluster.bean(n, MetadataGroup.class).leads())
				.findFirst()
				.orElse(-1);
			assertThat(leader[0]).as("a leader").isNotNegative();
		});
		return leader[0];
	}

	private Liveness liveness(int node) {
		return this.cluster.bean(node, Liveness.class);
	}

	private CircuitBreaker.State breaker(int node, Node peer) {
		return this.cluster.bean(node, PeerClient.class).breakerState(peer);
	}

}
