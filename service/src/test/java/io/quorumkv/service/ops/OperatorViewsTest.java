package io.quorumkv.service.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.quorumkv.storage.StorageStats;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The pure parts of the admin view: reachability, histogram reading, derived storage
 * values, tables.
 */
class OperatorViewsTest {

	@Test
	void reachabilityFollowsTheBreakerThenTheSharedViewThenTheLastCall() {
		assertThat(ClusterView.reachable(CircuitBreaker.State.OPEN, "success", false)).isFalse();
		assertThat(ClusterView.reachable(CircuitBreaker.State.FORCED_OPEN, null, false)).isFalse();
		assertThat(ClusterView.reachable(CircuitBreaker.State.CLOSED, "success", false)).isTrue();
		assertThat(ClusterView.reachable(CircuitBreaker.State.HALF_OPEN, "timeout", false)).isFalse();
		assertThat(ClusterView.reachable(CircuitBreaker.State.CLOSED, null, false)).isNull();
		// The shared view says up: a call that failed before the peer returned is past.
		assertThat(ClusterView.reachable(CircuitBreaker.State.CLOSED, "error", true)).isTrue();
		assertThat(ClusterView.reachable(CircuitBreaker.State.OPEN, "error", true)).isFalse();
	}

	@Test
	void membershipSaysWhetherTheCleanUpWaitsRunsOrWhatItLastDid() {
		Map<String, @Nullable Object> last = Map.of("epoch", 7, "removed", 300128, "durationMs", 30194);
		assertThat(MembershipView.text(status(cleanup(true, false, null))))
			.isEqualTo("membership: epoch 7, no change under way; cleanup waiting for its turn (not run)\n");
		assertThat(MembershipView.text(status(cleanup(false, true, last))))
			.isEqualTo("membership: epoch 7, no change under way; cleanup running\n");
		assertThat(MembershipView.text(status(cleanup(false, false, last))))
			.isEqualTo("membership: epoch 7, no change under way; cleanup last removed 300128 entries at epoch 7\n");
		Map<String, @Nullable Object> skipped = new HashMap<>(last);
		skipped.put("removed", 0L);
		skipped.put("skipped", "newcomer of change c1, which started with an empty storage");
		assertThat(MembershipView.text(status(cleanup(false, false, skipped)))).isEqualTo(
				"membership: epoch 7, no change under way; cleanup last skipped at epoch 7 (newcomer of change c1, which started with an empty storage)\n");
		Map<String, @Nullable Object> interrupted = new HashMap<>(last);
		interrupted.put("keptFromEpoch", 8L);
		assertThat(MembershipView.text(status(cleanup(false, false, interrupted)))).isEqualTo(
				"membership: epoch 7, no change under way; cleanup last removed 300128 entries at epoch 7 (kept the rest: the ring moved on to epoch 8 while it ran)\n");
		assertThat(MembershipView.text(status(cleanup(true, false, last)))).isEqualTo(
				"membership: epoch 7, no change under way; cleanup waiting for its turn (last removed 300128 entries at epoch 7)\n");
	}

	private static Map<String, @Nullable Object> cleanup(boolean waiting, boolean running,
			@Nullable Map<String, @Nullable Object> last) {
		Map<String, @Nullable Object> cleanup = new HashMap<>();
		cleanup.put("waiting", waiting);
		cleanup.put("running", running);
		cleanup.put("last", last);
		return cleanup;
	}

	private static Map<String, @Nullable Object> status(Map<String, @Nullable Object> cleanup) {
		Map<String, @Nullable Object> ring = new HashMap<>();
		ring.put("epoch", 7);
		ring.put("change", null);
		Map<String, @Nullable Object> status = new HashMap<>();
		status.put("ring", ring);
		status.put("cleanup", cleanup);
		status.put("transfers", List.of());
		return status;
	}

	@Test
	void bucketCountsAreReadAsCumulativeEitherWay() {
		CountAtBucket[] perBucket = { new CountAtBucket(1.0, 2), new CountAtBucket(2.0, 3), new CountAtBucket(4.0, 5) };
		assertThat(ClusterView.cumulative(perBucket, 10)).containsExactly(2, 5, 10);
		CountAtBucket[] cumulative = { new CountAtBucket(1.0, 2), new CountAtBucket(2.0, 5),
				new CountAtBucket(4.0, 10) };
		assertThat(ClusterView.cumulative(cumulative, 10)).containsExactly(2, 5, 10);
	}

	@Test
	void lsmStatsGiveLevelsDebtAndWriteAmplification() {
		StorageStats stats = new StorageStats("lsm",
				Map.of("flush.bytes", 1000L, "compaction.bytes.written", 1500L, "wal.bytes", 1000L),
				Map.of("memtable.bytes", 10L, "tables.level.0", 2L, "tables.level.1", 1L, "tables", 3L,
						"compaction.pending.bytes", 42L),
				null);
		Map<String, Object> derived = StorageView.derived(stats);
		assertThat(derived).containsEntry("memtableBytes", 10L)
			.containsEntry("tables", 3L)
			.containsEntry("pendingCompactionBytes", 42L)
			.containsEntry("writeAmplification", 2.5)
			.containsEntry("levels", List.of(Map.of("level", 0L, "tables", 2L), Map.of("level", 1L, "tables", 1L)));
	}

	/**
	 * qkv storage: what is derived from a gauge is not printed a second time under its
	 * raw name.
	 */
	@Test
	void theStorageTableShowsEachValueOnce() {
		StorageStats stats = new StorageStats("lsm", Map.of("flush.bytes", 1000L, "wal.bytes", 1000L),
				Map.of("memtable.bytes", 10L, "memtables.immutable", 1L, "tables.level.0", 2L, "tables", 2L,
						"disk.bytes", 99L, "compaction.pending.bytes", 42L, "wal.segments", 3L),
				null);
		Map<String, Object> rows = StorageView.rows(stats);
		assertThat(rows.keySet()).containsExactly("memtableBytes", "immutableMemtables", "tables in level 0", "tables",
				"diskBytes", "pendingCompactionBytes", "flush.bytes", "wal.bytes", "wal.segments");
		assertThat(rows.values().stream().filter((value) -> value.equals(10L))).hasSize(1);
	}

	@Test
	void otherBackendsDeriveOnlyWhatTheyHave() {
		StorageStats stats = new StorageStats("h2", Map.of("upserts", 5L), Map.of("pool.acquired", 1L), "disk full");
		assertThat(StorageView.derived(stats)).isEmpty();
		assertThat(StorageView.of(stats)).containsEntry("healthy", false).containsEntry("failure", "disk full");
		assertThat(StorageView
			.writeAmplification(Map.of("flush.bytes", 0L, "compaction.bytes.written", 0L, "wal.bytes", 10L))).isNull();
	}

	@Test
	void tablesAlignColumnsAndShowMissingValuesAsDashes() {
		String table = new TextTable("NODE", "STATE", "HINTS").row("http://a:1", "up", 0)
			.row("http://bb:2", null, 12)
			.toString();
		assertThat(table).isEqualTo("""
				NODE         STATE  HINTS
				http://a:1   up     0
				http://bb:2  -      12
				""");
	}

}
