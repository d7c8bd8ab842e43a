package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.net.URI;
import java.util.List;

import io.quorumkv.service.cluster.RingChange.Kind;
import io.quorumkv.service.cluster.RingChange.Phase;
import org.junit.jupiter.api.Test;

class RingTest {

	static final List<Node> THREE = List.of(Node.of("http://127.0.0.1:8081"), Node.of("http://127.0.0.1:8082"),
			Node.of("http://127.0.0.1:8083"));

	static Ring three(int replicationFactor) {
		return Ring.seed("qkv-test", THREE, replicationFactor, PlacementStrategy.RENDEZVOUS, 128);
	}

	@Test
	void aSeededRingHasEveryNodeNormalAtEpochOne() {
		Ring ring = three(3);
		assertThat(ring.epoch()).isEqualTo(1);
		assertThat(ring.oldMembers()).isEqualTo(THREE).isEqualTo(ring.newMembers());
		assertThat(ring.participants()).isEqualTo(THREE);
		assertThat(ring.change()).isNull();
		assertThat(ring.readable("http://127.0.0.1:8082")).isTrue();
	}

	@Test
	void aJoinGoesThroughStreamingAndHandoverToNormal() {
		Node newcomer = Node.of("node-4", "http://127.0.0.1:8084");
		Ring streaming = three(3).join(newcomer, "c1", "http://127.0.0.1:8081");
		assertThat(streaming.epoch()).isEqualTo(2);
		assertThat(streaming.change())
			.isEqualTo(new RingChange("c1", Kind.JOIN, "node-4", "http://127.0.0.1:8081", Phase.STREAMING));
		assertThat(streaming.oldMembers()).isEqualTo(THREE);
		assertThat(streaming.newMembers()).hasSize(4).contains(newcomer);
		assertThat(streaming.readable("node-4")).as("no reads before handover").isFalse();
		assertThat(streaming.participants()).contains(newcomer);
		Ring handover = streaming.advance();
		assertThat(handover.epoch()).isEqualTo(3);
		assertThat(handover.readsFromNew()).isTrue();
		assertThat(handover.readable("node-4")).isTrue();
		Ring done = handover.advance();
		assertThat(done.epoch()).isEqualTo(4);
		assertThat(done.change()).isNull();
		assertThat(done.node("node-4")).get().extracting(RingNode::state).isEqualTo(NodeState.NORMAL);
		assertThat(done.oldMembers()).hasSize(4);
	}

	@Test
	void aLeavingNodeStaysAnOldOwnerUntilHandoverAndIsThenRemoved() {
		Ring streaming = three(2).decommission("http://127.0.0.1:8083", "c2", "http://127.0.0.1:8081");
		assertThat(streaming.oldMembers()).hasSize(3);
		assertThat(streaming.newMembers()).hasSize(2);
		assertThat(streaming.readable("http://127.0.0.1:8083")).isTrue();
		assertThat(streaming.advance().readable("http://127.0.0.1:8083")).isFalse();
		Ring done = streaming.advance().advance();
		assertThat(done.isMember("http://127.0.0.1:8083")).isFalse();
		assertThat(done.node("http://127.0.0.1:8083")).get().extracting(RingNode::state).isEqualTo(NodeState.REMOVED);
		assertThat(done.participants()).hasSize(2);
	}

	@Test
	void aRemovedNodeTakesNoPartInAgreeing() {
		Ring streaming = three(2).remove("http://127.0.0.1:8082", "c3", "http://127.0.0.1:8081");
		assertThat(streaming.participants()).extracting(Node::id)
			.containsExactly("http://127.0.0.1:8081", "http://127.0.0.1:8083");
	}

	@Test
	void aReplacementTakesTheDeadNodesIdAndPlace() {
		Ring streaming = three(3).replace("http://127.0.0.1:8082", URI.create("http://127.0.0.1:9092"), "c4",
				"http://127.0.0.1:8081");
		RingNode replacement = streaming.node("http://127.0.0.1:8082").orElseThrow();
		assertThat(replacement.url()).isEqualTo(URI.create("http://127.0.0.1:9092"));
		assertThat(replacement.state()).isEqualTo(NodeState.JOINING);
		assertThat(streaming.oldMembers()).extracting(Node::id)
			.as("the placement does not change")
			.isEqualTo(streaming.newMembers().stream().map(Node::id).toList());
		assertThat(streaming.readable("http://127.0.0.1:8082")).isFalse();
		assertThat(streaming.advance().advance().node("http://127.0.0.1:8082").orElseThrow().state())
			.isEqualTo(NodeState.NORMAL);
	}

	@Test
	void oneChangeAtATimeAndNeverFewerMembersThanTheReplicationFactor() {
		Ring streaming = three(2).join(Node.of("n4", "http://127.0.0.1:8084"), "c1", "x");
		assertThatIllegalStateException().isThrownBy(() -> streaming.decommission("http://127.0.0.1:8081", "c2", "x"))
			.withMessageContaining("one change at a time");
		assertThatIllegalArgumentException().isThrownBy(() -> three(3).decommission("http://127.0.0.1:8081", "c2", "x"))
			.withMessageContaining("replication factor 3 needs 1 to 2 member nodes");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> three(2).join(Node.of("n4", "http://127.0.0.1:8081"), "c1", "x"))
			.withMessageContaining("already node");
		assertThatIllegalArgumentException().isThrownBy(() -> three(2).remove("nobody", "c1", "x"));
		assertThatIllegalStateException().isThrownBy(() -> three(2).advance());
	}

	@Test
	void jsonRoundTripsEveryField() {
		Ring ring = three(2).join(Node.of("node-4", "http://127.0.0.1:8084"), "c1", "http://127.0.0.1:8081");
		assertThat(RingJson.read(RingJson.write(ring))).isEqualTo(ring);
		Ring hashed = Ring.seed("qkv-x", THREE, 3, PlacementStrategy.CONSISTENT_HASH, 64);
		assertThat(RingJson.read(RingJson.write(hashed))).isEqualTo(hashed);
		assertThat(RingJson.writePublic(ring)).doesNotContain("change")
			.startsWith("{\"clusterId\":\"qkv-test\",\"epoch\":2,\"replicationFactor\":2,"
					+ "\"placement\":{\"strategy\":\"rendezvous\",\"virtualNodes\":128},\"nodes\":[{\"id\":");
		assertThatIllegalArgumentException().isThrownBy(() -> RingJson.read("{\"epoch\":1}"))
			.withMessageContaining("not a valid ring");
	}

	@Test
	void aRingFileKeepsTheRing(@org.junit.jupiter.api.io.TempDir java.nio.file.Path folder) {
		RingFile file = new RingFile(folder);
		assertThat(file.read()).isNull();
		Ring ok = three(2).decommission("http://127.0.0.1:8083", "c", "x");
		file.write(ok);
		assertThat(new RingFile(folder).read()).isEqualTo(ok);
	}

}
