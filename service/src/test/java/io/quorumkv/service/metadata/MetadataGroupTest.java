package io.quorumkv.service.metadata;

import static io.quorumkv.service.support.Eventually.eventually;
import static io.quorumkv.service.support.MetadataCluster.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.storage.ChecksummedFile;
import io.quorumkv.service.support.MetadataCluster;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;

/**
 * Three real nodes in this JVM whose metadata group runs over the internal API: the group
 * formats itself from the seeded ring, a change proposed through any node is applied as a
 * compare-and-set on the epoch and adopted into every node's ring file, two proposals
 * against one epoch see one applied and the other refused with the epoch it lost to, and
 * the group goes on without its leader and brings it back up to date.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MetadataGroupTest {

	@TempDir
	static Path root;

	static MetadataCluster metadata;

	static TestCluster cluster;

	@BeforeAll
	static void start() {
		metadata = MetadataCluster.create(root, 3, Map.of());
		cluster = metadata.nodes().startAll();
	}

	@AfterAll
	static void stop() {
		metadata.close();
	}

	/** The same ring one epoch later: a change that moves nothing. */
	static Ring bumped(Ring ring) {
		return new Ring(ring.clusterId(), ring.epoch() + 1, ring.replicationFactor(), ring.strategy(),
				ring.virtualNodes(), ring.nodes(), ring.change());
	}

	@Test
	@Order(1)
	void theGroupFormatsItselfFromTheSeededRing() {
		eventually(PATIENCE, () -> {
			for (int node = 0; node < 3; node++) {
				assertThat(metadata.group(node).logged()).as("node %d's log", node).hasValue(metadata.ring(node));
			}
		});
		int leader = metadata.leader(List.of(0, 1, 2));
		assertThat(MetadataGroup.voters(metadata.ring(0))).hasSize(3);
		// The leader's view of who is up: when it last heard from each other member.
		eventually(PATIENCE, () -> {
			@SuppressWarnings("unchecked")
			Map<String, Long> heard = (Map<String, Long>) metadata.group(leader).view().get("lastHeardMs");
			assertThat(heard).as("the leader's last contacts").hasSize(2).allSatisfy((peer, ms) -> {
				assertThat(peer).isNotEqualTo(metadata.id(leader));
				assertThat(ms).isBetween(0L, 10_000L);
			});
		});
		for (int node = 0; node < 3; node++) {
			assertThat(root.resolve("node" + node).resolve("raft")).as("node %d's Raft folder", node).isDirectory();
		}
		// Ratis' own metrics are each node's Micrometer meters: its log's appends, at
		// least, have counted something by now.
		for (int node = 0; node < 3; node++) {
			MeterRegistry meters = cluster.bean(node, MeterRegistry.class);
			List<Meter> ratis = meters.getMeters()
				.stream()
				.filter((meter) -> meter.getId().getName().startsWith("ratis."))
				.toList();
			System.out.println("MetadataGroupTest: node " + node + " exports " + ratis.size() + " Ratis meters, e.g. "
					+ ratis.stream().map((meter) -> meter.getId().getName()).sorted().limit(12).toList());
			assertThat(ratis).as("node %d's Ratis meters", node).isNotEmpty();
			assertThat(ratis).allSatisfy((meter) -> assertThat(meter.getId().getTag("group")).startsWith("group-"));
			// A metric Ratis names after a peer is one meter name with the peer as a tag.
			assertThat(ratis).allSatisfy((meter) -> assertThat(meter.getId().getName()).doesNotContain("http"));
			assertThat(meters.find("ratis.server.peerCommitIndex").gauges()).as("node %d", node)
				.allSatisfy((gauge) -> assertThat(gauge.getId().getTag("peer")).startsWith("http://127.0.0.1:"))
				.isNotEmpty();
			assertThat(ratis.stream()
				.filter((meter) -> meter.getId().getName().startsWith("ratis.log_worker."))
				.flatMap((meter) -> java.util.stream.StreamSupport.stream(meter.measure().spliterator(), false))
				.mapToDouble(io.micrometer.core.instrument.Measurement::getValue)
				.sum()).as("node %d's log worker metrics", node).isPositive();
		}
	}

	@Test
	@Order(2)
	void aChangeIsAppliedOnEveryNodeAndKeptInItsRingFile() throws Exception {
		Ring base = metadata.ring(1);
		MetadataGroup.Proposal proposal = metadata.group(1).propose(base.epoch(), bumped(base)).block(PATIENCE);
		assertThat(proposal.applied()).isTrue();
		assertThat(proposal.epoch()).isEqualTo(base.epoch() + 1);
		eventually(PATIENCE, () -> {
			for (int node = 0; node < 3; node++) {
				assertThat(metadata.ring(node).epoch()).as("node %d", node).isEqualTo(base.epoch() + 1);
			}
		});
		for (int node = 0; node < 3; node++) {
			Path file = root.resolve("node" + node).resolve("ring");
			// QKVG: the ring file's magic in the envelope of the node's small files.
			assertThat(new ChecksummedFile(file, 0x514b5647, 1).readText()).as("node %d's ring file", node)
				.contains("\"epoch\":" + (base.epoch() + 1));
		}
	}

	@Test
	@Order(3)
	void ofTwoProposalsAgainstOneEpochOneIsAppliedAndTheOtherRefusedWithTheEpochItLostTo() {
		Ring base = metadata.ring(0);
		List<MetadataGroup.Proposal> outcomes = Mono
			.zip(metadata.group(0).propose(base.epoch(), bumped(base)),
					metadata.group(2).propose(base.epoch(), bumped(base)))
			.map((both) -> List.of(both.getT1(), both.getT2()))
			.block(PATIENCE);
		assertThat(outcomes).filteredOn(MetadataGroup.Proposal::applied).hasSize(1);
		MetadataGroup.Proposal refused = outcomes.stream().filter((p) -> !p.applied()).findFirst().orElseThrow();
		assertThat(refused.epoch()).isEqualTo(base.epoch() + 1);
		assertThat(refused.reason()).contains("stale").contains("epoch " + base.epoch());
		MetadataGroup.Proposal stale = metadata.group(1)
			.propose(base.epoch() - 1, bumped(metadata.ring(1)))
			.block(PATIENCE);
		assertThat(stale.applied()).isFalse();
		assertThat(stale.epoch()).isEqualTo(base.epoch() + 1);
	}

	@Test
	@Order(4)
	void theGroupGoesOnWithoutItsLeaderAndTheLeaderCatchesUpWhenBack() {
		int leader = metadata.leader(List.of(0, 1, 2));
		cluster.stop(leader);
		List<Integer> others = new ArrayList<>(List.of(0, 1, 2));
		others.remove(Integer.valueOf(leader));
		int asked = others.getFirst();
		Ring base = metadata.ring(asked);
		MetadataGroup.Proposal proposal = metadata.group(asked).propose(base.epoch(), bumped(base)).block(PATIENCE);
		assertThat(proposal.applied()).isTrue();
		metadata.leader(others);
		cluster.start(leader);
		eventually(PATIENCE, () -> assertThat(metadata.ring(leader).epoch()).isEqualTo(base.epoch() + 1));
	}

	@Test
	@Order(5)
	void aCallThatIsNotRaftIsRefusedWithoutTouchingTheGroup() {
		cluster.internalClient(0)
			.post()
			.uri(InternalApi.RAFT_PATH + "/vote")
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.bodyValue(new byte[] { (byte) 0xFF, 0x01, 0x02 })
			.exchange()
			.expectStatus()
			.isBadRequest();
		cluster.internalClient(0)
			.post()
			.uri(InternalApi.RAFT_PATH + "/no-such-kind")
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.bodyValue(new byte[] { 1 })
			.exchange()
			.expectStatus()
			.isNotFound();
		assertThat(RingJson.write(metadata.ring(0))).contains(metadata.ring(0).clusterId());
	}

	/**
	 * A node restarted while the ring moved on coordinates nothing under its older ring:
	 * its requests wait for the group (a majority) to confirm its ring, and are refused
	 * (503) when that does not come; once it comes, they are served under the newer ring.
	 */
	@Test
	@Order(6)
	void aNodeRestartedBehindTheLogCoordinatesOnlyOnceTheGroupHasConfirmedItsRing() {
		int restarted = 2;
		cluster.stop(restarted);
		Ring base = metadata.ring(0);
		assertThat(metadata.group(0).propose(base.epoch(), bumped(base)).block(PATIENCE).applied()).isTrue();
		eventually(PATIENCE, () -> assertThat(metadata.ring(1).epoch()).isEqualTo(base.epoch() + 1));
		// Alone, the restarted node cannot learn whether its ring is current.
		cluster.stop(0);
		cluster.stop(1);
		cluster.start(restarted);
		assertThat(metadata.ring(restarted).epoch()).isEqualTo(base.epoch());
		String refused = TestCluster.body(cluster.client(restarted).get().uri("/v0/entity?id=k&ack=1&from=3"), 503);
		assertThat(refused).contains("restarted under ring epoch " + base.epoch());
		// With a majority back (once it has elected a leader: seconds), the node confirms
		// and serves under the newer ring.
		cluster.start(1);
		eventually(PATIENCE,
				() -> cluster.client(restarted)
					.get()
					.uri("/v0/entity?id=k&ack=1&from=3")
					.exchange()
					.expectStatus()
					.isNotFound());
		assertThat(metadata.ring(restarted).epoch()).isEqualTo(base.epoch() + 1);
		cluster.start(0);
	}

	/**
	 * A proposal through a node without a majority runs out of its Raft client's
	 * attempts, and Ratis then closes that client for good (its ordered window). The
	 * node's next proposals, once a majority is back, go through a new client: they used
	 * to fail with "SlidingWindow$Client ... is closed" until the node restarted.
	 */
	@Test
	@Order(7)
	void aProposalThatRanOutOfAttemptsLeavesTheNodeAbleToProposeOnceAMajorityIsBack() {
		int asked = 0;
		cluster.stop(1);
		cluster.stop(2);
		Ring base = metadata.ring(asked);
		assertThatThrownBy(() -> metadata.group(asked).propose(base.epoch(), bumped(base)).block(PATIENCE))
			.as("a proposal without a majority")
			.isNotNull();
		cluster.start(1);
		cluster.start(2);
		eventually(PATIENCE, () -> {
			Ring now = metadata.ring(asked);
			assertThat(metadata.group(asked).propose(now.epoch(), bumped(now)).block(PATIENCE).applied()).isTrue();
		});
	}

}
