package io.quorumkv.service.metadata;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.http.MediaType;

/**
 * A forced reconfiguration on real nodes in this JVM (three seeds, all three voters, RF
 * 2): two voters are lost for good, membership changes stop (no leader), the operator
 * forces the next generation of the group on the survivor, and a {@code remove} of a dead
 * node is applied through the new group; then a lost voter comes back with its old log
 * and cannot disturb the new group: its calls are refused as calls for another group, the
 * survivor keeps its leadership, term and ring, and changes still go through.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ForcedReconfigurationTest {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	@TempDir
	static Path root;

	static TestCluster cluster;

	@BeforeAll
	static void start() {
		cluster = new TestCluster(root, 3, Map.of("quorumkv.cluster.replication-factor", "2",
				"management.endpoints.web.exposure.include", "health,quorumkv"));
		cluster.startAll();
	}

	@AfterAll
	static void stop() {
		cluster.close();
	}

	static MetadataGroup group(int node) {
		return cluster.bean(node, MetadataGroup.class);
	}

	static Ring ring(int node) {
		return cluster.bean(node, ClusterState.class).ring().orElseThrow();
	}

	static String id(int node) {
		return cluster.bean(node, ClusterState.class).self().id();
	}

	@Test
	@Order(1)
	void aMajorityOfVotersLostForGoodIsRecoveredFromOneSurvivorAndARemoveGoesThrough() {
		eventually(PATIENCE, () -> {
			for (int node = 0; node < 3; node++) {
				assertThat(group(node).logged()).as("node %d's log", node).hasValue(ring(node));
			}
			assertThat(List.of(0, 1, 2).stream().filter((node) -> group(node).leads())).hasSize(1);
		});
		String lost1 = id(1);
		String lost2 = id(2);
		long epoch = ring(0).epoch();
		cluster.stop(1);
		cluster.stop(2);
		// Without a majority of the voters the log does not answer: no change goes.
		assertThat(admin(0, "remove", "{\"url\":\"" + cluster.url(1) + "\"}")).startsWith("503 ");
		// Forcing with a voter named lost that still answers is refused.
		assertThat(admin(0, "force-reconfigure", "{\"lost\":\"" + cluster.url(0) + "\"}")).startsWith("409 ");

		String forced = admin(0, "force-reconfigure", "{\"lost\":\"" + cluster.url(1) + "," + cluster.url(2) + "\"}");
		System.out.println("ForcedReconfigurationTest: " + forced);
		assertThat(forced).startsWith("200 ")
			.contains("\"generation\":1")
			.contains("\"epoch\":" + (epoch + 1))
			.contains("\"voters\":[\"" + id(0) + "\"]");
		assertThat(ring(0).generation().number()).isEqualTo(1);
		assertThat(ring(0).generation().fenced()).extracting((node) -> node.id())
			.containsExactlyInAnyOrder(lost1, lost2);
		eventually(PATIENCE, () -> assertThat(group(0).leads()).isTrue());
		assertThat(group(0).view()).containsEntry("voters", List.of(id(0))).containsEntry("listeners", List.of());

		String removed = admin(0, "remove", "{\"url\":\"" + cluster.url(1) + "\"}");
		assertThat(removed).startsWith("200 ").contains("\"epoch\":" + (epoch + 2));
		Ring logged = group(0).read().block(PATIENCE).orElseThrow();
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
		Map<String, ?> before = group(0).view();
		long epoch = ring(0).epoch();
		Counter refused = cluster.bean(0, MeterRegistry.class).find("quorumkv.metadata.calls.other.group").counter();
		assertThat(refused).isNotNull();
		double refusedBefore = refused.count();
		// Node 2 comes back with its data folder: the log and ring of generation 0.
		cluster.start(2);
		assertThat(ring(2).generation().number()).isZero();
		// It stands for election in its old group: the survivor refuses its calls.
		eventually(PATIENCE, () -> assertThat(refused.count()).isGreaterThan(refusedBefore));
		assertThat(group(0).leads()).isTrue();
		assertThat(group(0).view()).containsEntry("term", before.get("term"))
			.containsEntry("voters", List.of(id(0)))
			.containsEntry("listeners", List.of());
		assertThat(group(2).leads()).isFalse();
		assertThat(ring(0).generation().number()).isEqualTo(1);
		assertThat(ring(0).epoch()).isEqualTo(epoch);
		// The new group still takes changes.
		Ring base = group(0).read().block(PATIENCE).orElseThrow();
		Ring next = new Ring(base.clusterId(), base.epoch() + 1, base.replicationFactor(), base.strategy(),
				base.virtualNodes(), base.nodes(), base.change(), base.generation());
		assertThat(group(0).propose(base.epoch(), next).block(PATIENCE).applied()).isTrue();
		assertThat(group(0).leads()).isTrue();
	}

	private static String admin(int node, String action, String json) {
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

}
