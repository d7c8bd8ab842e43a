package io.quorumkv.service.repair;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.replication.HintStore;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.support.ShiftedClock;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Keys deleted while a replica was down for longer than the hint window: with a repair,
 * they stay deleted after it and after the grace period has passed, when every replica
 * drops their tombstones; without a repair the tombstones are kept past the grace period
 * (so the replica that missed the deletes cannot bring the keys back). Three in-JVM nodes
 * on each backend share one wall clock that the test moves forward (two hours past the
 * hint window, eleven days past the ten-day grace period): no sleeping.
 */
class TombstoneSafetyTest {

	private static final Duration TIMEOUT = Duration.ofMinutes(2);

	private static final int KEYS = 20;

	private static final int DELETED = 10;

	@TempDir
	Path root;

	@ParameterizedTest(name = "{0}, repaired: {1}")
	@CsvSource({ "lsm, true", "lsm, false", "h2, true", "h2, false", "derby, true", "derby, false" })
	void aDeleteAReplicaMissedForLongerThanTheHintWindowStaysDeleted(String backend, boolean repaired) {
		ShiftedClock clock = new ShiftedClock(Duration.ZERO);
		TestCluster cluster = new TestCluster(this.root, 3,
				Map.of("quorumkv.storage.backend", backend, "quorumkv.storage.derby.durability", "no-sync",
						"quorumkv.repair.scheduled", "false", "quorumkv.repair.max-entries-per-second", "0",
						"quorumkv.cluster.hints.max-age", "1h"));
		for (int node = 0; node < 3; node++) {
			cluster.withClock(node, clock);
		}
		try (cluster) {
			cluster.startAll();
			for (int i = 0; i < KEYS; i++) {
				put(cluster, "k" + i);
			}
			cluster.stop(2);
			for (int i = 0; i < DELETED; i++) {
				cluster.client(0)
					.delete()
					.uri(cluster.uri(0, "/v0/entity?id=k" + i + "&replicas=2/3"))
					.exchange()
					.expectStatus()
					.isAccepted();
			}
			// Node 2 stays down past the hint window: its hints are dropped, not
			// delivered.
			clock.advance(Duration.ofHours(2));
			cluster.start(2);
			eventually(Duration.ofSeconds(30), () -> {
				assertThat(cluster.bean(0, HintStore.class).pending(Node.of(cluster.url(2)))).isZero();
				assertThat(cluster.bean(0, MeterRegistry.class).get("quorumkv.hints.dropped").counter().count())
					.isEqualTo(DELETED);
				// The deletes opened node 0's breaker towards node 2; repair is
				// refused while it is open (a quick restart met it so).
				assertThat(cluster.bean(0, PeerClient.class).breakerState(Node.of(cluster.url(2))))
					.isNotEqualTo(CircuitBreaker.State.OPEN);
			});
			assertThat(cluster.localValue(2, "k0")).as("node 2 missed the delete").isEqualTo("v-k0");

			if (repaired) {
				RepairReport report = cluster.bean(0, RepairService.class)
					.repair(RepairService.Scope.ALL)
					.block(TIMEOUT);
				assertThat(report).isNotNull();
				assertThat(report.rangesFailed()).isZero();
				assertThat(report.entriesOut()).isEqualTo(DELETED);
				assertThat(cluster.localValue(2, "k0")).isEqualTo("<tombstone>");
			}
			clock.advance(Duration.ofDays(11));
			for (int node = 0; node < 3; node++) {
				Storage storage = cluster.bean(node, Storage.class);
				storage.compact().then(storage.purgeTombstones()).block(TIMEOUT);
			}

			for (int i = 0; i < DELETED; i++) {
				String key = "k" + i;
				for (int node = 0; node < 3; node++) {
					cluster.client(node)
						.get()
						.uri(cluster.uri(node, "/v0/entity?id=" + key + "&replicas=3/3"))
						.exchange()
						.expectStatus()
						.isNotFound();
				}
			}
			if (repaired) {
				// Every replica dropped the tombstones: nothing left but the live keys.
				for (int node = 0; node < 3; node++) {
					List<Entry> left = everything(cluster, node);
					assertThat(left).as("node %d's store after the purge", node)
						.hasSize(KEYS - DELETED)
						.noneMatch(Entry::isTombstone);
				}
				RepairReport again = cluster.bean(1, RepairService.class)
					.repair(RepairService.Scope.ALL)
					.block(TIMEOUT);
				assertThat(again).isNotNull();
				assertThat(again.entriesIn() + again.entriesOut()).isZero();
			}
			else {
				for (int node = 0; node < 2; node++) {
					assertThat(cluster.localValue(node, "k0")).as("node %d keeps its tombstone", node)
						.isEqualTo("<tombstone>");
					assertThat(cluster.bean(node, MeterRegistry.class)
						.get("quorumkv.tombstones.held-back")
						.counter()
						.count()).isGreaterThanOrEqualTo(DELETED);
				}
			}
			for (int i = DELETED; i < KEYS; i++) {
				cluster.client(1)
					.get()
					.uri(cluster.uri(1, "/v0/entity?id=k" + i + "&replicas=3/3"))
					.exchange()
					.expectStatus()
					.isOk()
					.expectBody(String.class)
					.isEqualTo("v-k" + i);
			}
		}
	}

	private static void put(TestCluster cluster, String key) {
		cluster.client(0)
			.put()
			.uri(cluster.uri(0, "/v0/entity?id=" + key + "&replicas=3/3"))
			.bodyValue(("v-" + key).getBytes(StandardCharsets.UTF_8))
			.exchange()
			.expectStatus()
			.isCreated();
	}

	private static List<Entry> everything(TestCluster cluster, int node) {
		return cluster.bean(node, Storage.class).scan(new byte[0], null).collectList().block(TIMEOUT);
	}

}
