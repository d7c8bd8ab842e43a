package io.quorumkv.service.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import org.junit.jupiter.api.Test;

class CleanupTest {

	private static final Duration DELAY = Duration.ofSeconds(5);

	// Listed out of id order, with a removed node among them.
	private static final Ring RING = new Ring("qkv-test", 9, 3, PlacementStrategy.RENDEZVOUS, 16,
			List.of(node("node-c", NodeState.NORMAL), node("node-a", NodeState.NORMAL),
					node("node-x", NodeState.REMOVED), node("node-e", NodeState.NORMAL),
					node("node-b", NodeState.NORMAL), node("node-d", NodeState.NORMAL)),
			null);

	@Test
	void membersStartTheirCleanUpsAtDifferentMomentsWithinOneMoreDelay() {
		List<Duration> starts = List.of("node-a", "node-b", "node-c", "node-d", "node-e")
			.stream()
			.map((id) -> Cleanup.autoStart(RING, id, DELAY))
			.toList();
		// Five members: a fifth of the delay apart, in id order, the first after the
		// delay itself.
		assertThat(starts).containsExactly(Duration.ofSeconds(5), Duration.ofSeconds(6), Duration.ofSeconds(7),
				Duration.ofSeconds(8), Duration.ofSeconds(9));
	}

	@Test
	void aNodeThatIsNotAMemberWaitsTheDelayOnly() {
		assertThat(Cleanup.autoStart(RING, "node-x", DELAY)).isEqualTo(DELAY);
		assertThat(Cleanup.autoStart(RING, "unknown", DELAY)).isEqualTo(DELAY);
	}

	private static RingNode node(String id, NodeState state) {
		return new RingNode(id, URI.create("http://127.0.0.1:" + (1000 + id.charAt(id.length() - 1))), state);
	}

}
