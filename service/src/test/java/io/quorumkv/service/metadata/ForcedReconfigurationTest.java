package io.quorumkv.service.metadata;

import static io.quorumkv.service.support.Eventually.eventually;
import static io.quorumkv.service.support.MetadataCluster.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
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
 * A forced reconfiguration on real nodes in this JVM (four seeds: three voters and a
 * listener, RF 2): two voters are lost for good, membership changes stop (no leader), the
 * operator forces the next generation of the group on the surviving voter, whose voters
 * are then the survivor and the listener (it must follow the survivor into the new group
 * for that group to have a leader; a force asked while the listener serves a newer ring
 * is refused until the survivor holds it), and a {@code remove} of a dead node is applied
 * through the new group; then a lost voter comes back with its old log and cannot disturb
 * the new group: it ends up fenced in the new generation (whether its calls were refused
 * as calls for another group first or the ring reached it first), the survivor keeps its
 * term and ring, and changes still go through.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ForcedReconfigurationTest {

	@TempDir
	static Path root;

	static MetadataCluster metadata;

	static TestCluster cluster;

	/** The surviving voter, the listener and the two voters lost, by node index. */
	static int survivor;

	static int listener;

	static int lost1;

	static int lost2;

	/** The lost voters' ids (a stopped node has no beans to ask). */
	static String lost1Id;

	static String lost2Id;

	@BeforeAll
	static void start() {
		metadata = MetadataCluster.create(root, 4, MetadataCluster.operated(Map.of()));
		cluster = metadata.nodes().startAll();
	}

	@AfterAll
	static void stop() {
		metadata.close();
	}

	@Test
	@Order(1)
	void aMajorityOfVotersLostForGoodIsRecoveredFromOneSurvivorAndTheListenerAndARemoveGoesThrough() {
		List<Integer> all = List.of(0, 1, 2, 3);
		eventually(PATIENCE, () -> {
			for (int node : all) {
				assertThat(metadata.group(node).logged()).as("node %d's log", node).hasValue(metadata.ring(node));
			}
			assertThat(all.stream().filter((node) -> metadata.group(node).leads())).hasSize(1);
		});
		List<?> voters = (List<?>) metadata.group(0).view().get("voters");
		assertThat(voters).hasSize(3);
		List<Integer> voting = all.stream().filter((node) -> voters.contains(metadata.id(node))).toList();
		listener = all.stream().filter((node) -> !voting.contains(node)).findFirst().orElseThrow();
		survivor = voting.get(0);
		lost1 = voting.get(1);
		lost2 = voting.get(2);
		lost1Id = metadata.id(lost1);
		lost2Id = metadata.id(lost2);
		long epoch = metadata.ring(survivor).epoch();
		cluster.stop(lost1);
		cluster.stop(lost2);
		// Without a majority of the voters the log does not answer: no change goes.
		assertThat(metadata.answer(survivor, "remove", "{\"url\":\"" + cluster.url(lost1) + "\"}")).startsWith("503 ");
		// Forcing with a voter named lost that still answers is refused.
		assertThat(metadata.answer(survivor, "force-reconfigure", "{\"lost\":\"" + cluster.url(survivor) + "\"}"))
			.startsWith("409 ");
		String lost = "{\"lost\":\"" + cluster.url(lost1) + "," + cluster.url(lost2) + "\"}";
		// The listener serves a newer ring than the survivor (as if it had applied a
		// change the survivor never received): the force is refused, naming it, and the
		// survivor takes that ring (ring exchange).
		Ring listened = metadata.ring(listener);
		Ring ahead = new Ring(listened.clusterId(), epoch + 1, listened.replicationFactor(), listened.strategy(),
				listened.virtualNodes(), listened.nodes(), listened.change(), listened.generation());
		assertThat(cluster.bean(listener, ClusterState.class).install(ahead).block(PATIENCE)).isTrue();
		assertThat(metadata.answer(survivor, "force-reconfigure", lost)).startsWith("409 ")
			.contains("node " + metadata.id(listener) + " (")
			.contains("serves ring epoch " + (epoch + 1) + ", newer than this node's " + epoch);
		eventually(PATIENCE, () -> assertThat(metadata.ring(survivor).epoch()).isEqualTo(epoch + 1));

		String forced = metadata.answer(survivor, "force-reconfigure", lost);
		System.out.println("ForcedReconfigurationTest: " + forced);
		assertThat(forced).startsWith("200 ")
			.contains("\"generation\":1")
			.contains("\"epoch\":" + (epoch + 2))
			.contains(metadata.id(listener));
		assertThat(metadata.ring(survivor).generation().number()).isEqualTo(1);
		assertThat(metadata.ring(survivor).generation().fenced()).extracting((node) -> node.id())
			.containsExactlyInAnyOrder(lost1Id, lost2Id);
		// The listener followed into the new group, as its second voter.
		eventually(PATIENCE, () -> {
			assertThat(metadata.ring(listener).generation().number()).isEqualTo(1);
			assertThat(List.of(survivor, listener).stream().filter((node) -> metadata.group(node).leads())).hasSize(1);
		});
		assertThat(metadata.group(survivor).view().get("voters"))
			.asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
			.containsExactlyInAnyOrder(metadata.id(survivor), metadata.id(listener));

		String removed = metadata.answer(survivor, "remove", "{\"url\":\"" + cluster.url(lost1) + "\"}");
		assertThat(removed).startsWith("200 ").contains("\"epoch\":" + (epoch + 3));
		Ring logged = metadata.group(survivor).read().block(PATIENCE).orElseThrow();
		assertThat(logged.epoch()).isEqualTo(epoch + 3);
		assertThat(logged.generation().number()).isEqualTo(1);
		RingChange change = logged.change();
		assertThat(change).isNotNull();
		assertThat(change.kind()).isEqualTo(RingChange.Kind.REMOVE);
		assertThat(change.nodeId()).isEqualTo(lost1Id);
		assertThat(root.resolve("node" + survivor).resolve(GroupGenerations.RETIRED)).isDirectory();
		eventually(PATIENCE, () -> assertThat(metadata.group(listener).logged()).hasValue(logged));
	}

	@Test
	@Order(2)
	void aVoterOfTheOldGenerationThatComesBackCannotDisturbTheNewGroup() {
		Map<String, ?> before = metadata.group(survivor).view();
		long epoch = metadata.ring(survivor).epoch();
		Counter refused = cluster.bean(survivor, MeterRegistry.class)
			.find("quorumkv.metadata.calls.other.group")
			.counter();
		assertThat(refused).isNotNull();
		double refusedBefore = refused.count();
		// The second lost voter comes back with its data folder: the log and ring of
		// generation 0 (a survivor's call may already have brought it the ring of
		// generation 1 by the time its start returns).
		cluster.start(lost2);
		// Two orders are possible, and both keep it out: it stands for election in its
		// old
		// group first (the survivors refuse those calls as calls for another group and
		// answer with their ring), or a survivor's ring reaches it before its election
		// timer fires. Either way it ends up serving generation 1, fenced, in no group.
		// (That the refusal is counted is RaftEndpointTest's.)
		eventually(PATIENCE, () -> assertThat(metadata.ring(lost2).generation().number()).isEqualTo(1));
		System.out.println("ForcedReconfigurationTest: calls of the old group refused while the lost voter came back: "
				+ (refused.count() - refusedBefore));
		assertThat(metadata.ring(lost2).generation().fenced()).extracting((node) -> node.id())
			.contains(metadata.id(lost2));
		assertThat(metadata.group(survivor).view()).containsEntry("term", before.get("term"))
			.containsEntry("voters", before.get("voters"));
		assertThat(metadata.group(lost2).leads()).isFalse();
		assertThat(metadata.ring(survivor).generation().number()).isEqualTo(1);
		assertThat(metadata.ring(survivor).epoch()).isEqualTo(epoch);
		// The new group still takes changes.
		int leader = metadata.leader(List.of(survivor, listener));
		Ring base = metadata.group(leader).read().block(PATIENCE).orElseThrow();
		Ring next = new Ring(base.clusterId(), base.epoch() + 1, base.replicationFactor(), base.strategy(),
				base.virtualNodes(), base.nodes(), base.change(), base.generation());
		assertThat(metadata.group(leader).propose(base.epoch(), next).block(PATIENCE).applied()).isTrue();
	}

}
