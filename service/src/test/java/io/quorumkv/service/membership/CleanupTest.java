package io.quorumkv.service.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.util.List;
import java.util.Optional;

import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import org.junit.jupiter.api.Test;

class CleanupTest {

	// Listed out of id order, with a removed node among them.
	private static final Ring RING = new Ring("qkv-test", 9, 3, PlacementStrategy.RENDEZVOUS, 16,
			List.of(node("node-c", NodeState.NORMAL), node("node-a", NodeState.NORMAL),
					node("node-x", NodeState.REMOVED), node("node-e", NodeState.NORMAL),
					node("node-b", NodeState.NORMAL), node("node-d", NodeState.NORMAL)),
			null);

	@Test
	void membersCleanUpOneAfterTheOtherInTheOrderOfTheirIds() {
		List<Optional<String>> before = List.of("node-a", "node-b", "node-c", "node-d", "node-e")
			.stream()
			.map((id) -> Cleanup.predecessor(RING, id).map(RingNode::id))
			.toList();
		// The removed node-x is not a member: node-e follows node-d.
		assertThat(before).containsExactly(Optional.empty(), Optional.of("node-a"), Optional.of("node-b"),
				Optional.of("node-c"), Optional.of("node-d"));
	}

	@Test
	void aNodeThatIsNotAMemberWaitsForNoOne() {
		assertThat(Cleanup.predecessor(RING, "node-x")).isEmpty();
		assertThat(Cleanup.predecessor(RING, "unknown")).isEmpty();
	}

	private static RingNode node(String id, NodeState state) {
		return new RingNode(id, URI.create("http://127.0.0.1:" + (1000 + id.charAt(id.length() - 1))), state);
	}

}
