package io.quorumkv.service.metadata;

import static io.quorumkv.service.support.Eventually.eventually;
import static io.quorumkv.service.support.MetadataCluster.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.support.MetadataCluster;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * A forced reconfiguration on real nodes in this JVM (three seeds, all three voters, RF
 * 2): two voters are lost for good, membership changes stop (no leader), the operator
 * forces the next generation of the group on the survivor, and a {@code remove} of a dead
 * node is applied through the new group; then a lost voter comes back with its old log
 * and cannot disturb the new group: it ends up fenced in the new generation (whether its
 * calls were refused as calls for another group first or the ring reached it first), the
 * survivor keeps its leadership, term and ring, and changes still go through.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ForcedReconfigurationTest {

	@TempDir
	static Path root;

	static MetadataCluster metadata;

	static TestCluster cluster;

	@BeforeAll
	static void start() {
		metadata = MetadataCluster.create(root, 3, MetadataCluster.operated(Map.of()));
		cluster = metadata.nodes().startAll();
	}

	@AfterAll
	static void stop() {
		metadata.close();
	}

	@Test
	@Order(1)
	void aMajorityOfVotersLostForGoodIsRecoveredFromOneSurvivorAndARemoveGoesThrough() {
		eventually(PATIENCE, () -> {
			for (int node = 0; node < 3; node++) {
				assertThat(metadata.group(node).logged()).as("node %d's log", node).hasValue(metadata.ring(node));
			}
			assertThat(List.of(0, 1, 2).stream().filter((node) -> metadata.group(node).leads())).hasSize(1);
		});
		String lost1 = metadata.id(1);
		String lost2 = metadata.id(2);
		long epoch = metadata.ring(0).epoch();
		cluster.stop(1);
		cluster.stop(2);
		// Without a majority of the voters the log does not answer: no change goes.
		assertThat(metadata.answer(0, "remove", "{\"url\":\"" + cluster.url(1) + "\"}")).startsWith("503 ");
		// Forcing with a voter named lost that still answers is refused.
		assertThat(metadata.answer(0, "force-reconfigure", "{\"lost\":\"" + cluster.url(0) + "\"}")).startsWith("409 ");

		String forced = metadata.answer(0, "force-reconfigure",
				"{\"lost\":\"" + cluster.url(1) + "," + cluster.url(2) + "\"}");
		System.out.println("ForcedReconfigurationTest: " + forced);
		assertThat(forced).startsWith("200 ")
			.contains("\"generation\":1")
			.contains("\"epoch\":" + (epoch + 1))
			.contains("\"voters\":[\"" + metadata.id(0) + "\"]");
		assertThat(metadata.ring(0).generation().number()).isEqualTo(1);
		assertThat(metadata.ring(0).generation().fenced()).extracting((node) -> node.id())
			.containsExactlyInAnyOrder(lost1, lost2);
		eventually(PATIENCE, () -> assertThat(metadata.group(0).leads()).isTrue());
		assertThat(metadata.group(0).view()).containsEntry("voters", List.of(metadata.id(0)))
			.containsEntry("listeners", List.of());

		String removed = metadata.answer(0, "remove", "{\"url\":\"" + cluster.url(1) + "\"}");
		assertThat(removed).startsWith("200 ").contains("\"epoch\":" + (epoch + 2));
		Ring logged = metadata.group(0).read().block(PATIENCE).orElseThrow();
		assertThat(logged.epoch()).isEqualTo(epoch + 2);
		assertThat(logged.generation().number()).isEqualTo(1);
		RingChange change = logged.change();
		assertThat(change).isNotNull();
		assertThat(change.kind()).isEqualTo(RingChange.Kind.REMOVE);
		assertThat(change.nodeId()).isEqualTo(lost1);
		assertThat(root.resolve("node0").resolve(GroupGenerations.RETIRED)).isDirectory();
	}

	@Test
	@Order(2)
	void aVoterOfTheOldGenerationThatComesBackCannotDisturbTheNewGroup() {
		Map<String, ?> before = metadata.group(0).view();
		long epoch = metadata.ring(0).epoch();
		Counter refused = cluster.bean(0, MeterRegistry.class).find("quorumkv.metadata.calls.other.group").counter();
		assertThat(refused).isNotNull();
		double refusedBefore = refused.count();
		// Node 2 comes back with its data folder: the log and ring of generation 0.
		cluster.start(2);
		assertThat(metadata.ring(2).generation().number()).isZero();
		// Two orders are possible, and both keep it out: it stands for election in its
		// old
		// group first (the survivor refuses those calls as calls for another group and
		// answers with its ring), or the survivor's ring reaches it before its election
		// timer fires. Either way it ends up serving generation 1, fenced, in no group.
		// (That the refusal is counted is RaftEndpointTest's.)
		eventually(PATIENCE, () -> assertThat(metadata.ring(2).generation().number()).isEqualTo(1));
		System.out.println("ForcedReconfigurationTest: calls of the old group refused while node 2 came back: "
				+ (refused.count() - refusedBefore));
		assertThat(metadata.ring(2).generation().fenced()).extracting((node) -> node.id()).contains(metadata.id(2));
		assertThat(metadata.group(0).leads()).isTrue();
		assertThat(metadata.group(0).view()).containsEntry("term", before.get("term"))
			.containsEntry("voters", List.of(metadata.id(0)))
			.containsEntry("listeners", List.of());
		assertThat(metadata.group(2).leads()).isFalse();
		assertThat(metadata.ring(0).generation().number()).isEqualTo(1);
		assertThat(metadata.ring(0).epoch()).isEqualTo(epoch);
		// The new group still takes changes.
		Ring base = metadata.group(0).read().block(PATIENCE).orElseThrow();
		Ring next = new Ring(base.clusterId(), base.epoch() + 1, base.replicationFactor(), base.strategy(),
				base.virtualNodes(), base.nodes(), base.change(), base.generation());
		assertThat(metadata.group(0).propose(base.epoch(), next).block(PATIENCE).applied()).isTrue();
		assertThat(metadata.group(0).leads()).isTrue();
	}

}
