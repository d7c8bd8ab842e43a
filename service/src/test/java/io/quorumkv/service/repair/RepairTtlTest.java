package io.quorumkv.service.repair;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

import io.quorumkv.storage.Entry;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.storage.contract.ManualClock;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.http.MediaType;

/**
 * Anti-entropy repair carries the expiry: on three nodes sharing a clock the test moves,
 * a replica that missed an expiring write, and one whose copy of it lost its expiry, both
 * hold the write with the coordinator's expiry after one repair, and expire it when due.
 */
class RepairTtlTest {

	private static final Duration TIMEOUT = Duration.ofMinutes(2);

	private final ManualClock clock = ManualClock.startingAt(Instant.now().truncatedTo(ChronoUnit.SECONDS));

	@TempDir
	Path root;

	@Test
	void aReplicaThatMissedAnExpiringWriteOrLostItsExpiryGetsItByRepair() {
		try (TestCluster cluster = new TestCluster(this.root, 3,
				Map.of("quorumkv.repair.scheduled", "false", "quorumkv.repair.max-entries-per-second", "0"))
			.withClock(this.clock)
			.startAll()) {
			long timestamp = this.clock.micros() - 1_000_000;
			long expiresAt = timestamp + 600_000_000L;
			for (int node = 0; node < 2; node++) {
				replicaPut(cluster, node, "missed", timestamp, expiresAt);
				replicaPut(cluster, node, "lost", timestamp, expiresAt);
			}
			replicaPut(cluster, 2, "lost", timestamp, null);
			assertThat(cluster.localValue(2, "missed")).isNull();
			assertThat(cluster.localExpiry(2, "lost")).isNull();

			RepairReport report = cluster.bean(0, RepairService.class).repair(RepairService.Scope.ALL).block(TIMEOUT);

			assertThat(report).isNotNull();
			assertThat(report.rangesFailed()).as("failed ranges: %s", report.ranges()).isZero();
			assertThat(report.rangesDiffered()).as("ranges of the two keys").isPositive();
			for (int node = 0; node < 3; node++) {
				for (String key : new String[] { "missed", "lost" }) {
					assertThat(cluster.localValue(node, key)).as("%s on node %d", key, node).isEqualTo("v");
					assertThat(cluster.localTimestamp(node, key)).as("%s on node %d", key, node).isEqualTo(timestamp);
					assertThat(cluster.localExpiry(node, key)).as("%s on node %d", key, node).isEqualTo(expiresAt);
				}
			}
			RepairReport again = cluster.bean(2, RepairService.class).repair(RepairService.Scope.ALL).block(TIMEOUT);
			assertThat(again).isNotNull();
			assertThat(again.rangesDiffered()).as("nothing left to repair").isZero();

			this.clock.advance(Duration.ofSeconds(600));
			for (String key : new String[] { "missed", "lost" }) {
				assertThat(cluster.localValue(2, key)).as("%s on node 2, expired", key).isEqualTo("<tombstone>");
			}
		}
	}

	/** A replica write on the node's stream, as a coordinator sends it. */
	private static void replicaPut(TestCluster cluster, int node, String key, long timestamp,
			@Nullable Long expiresAt) {
		byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
		byte[] value = "v".getBytes(StandardCharsets.UTF_8);
		cluster.replicaPut(node, (expiresAt != null) ? Entry.expiring(bytes, value, timestamp, expiresAt)
				: Entry.value(bytes, value, timestamp));
	}

}
