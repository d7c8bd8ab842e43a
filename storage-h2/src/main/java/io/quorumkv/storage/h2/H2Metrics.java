package io.quorumkv.storage.h2;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import io.quorumkv.storage.StorageStats;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.PoolMetrics;
import org.jspecify.annotations.Nullable;

/** The counters of an {@link H2Storage} and the pool gauges, as {@link StorageStats}. */
final class H2Metrics {

	final LongAdder gets = new LongAdder();

	final LongAdder getFailures = new LongAdder();

	final LongAdder upserts = new LongAdder();

	final LongAdder upsertFailures = new LongAdder();

	final LongAdder upsertRetries = new LongAdder();

	final LongAdder scans = new LongAdder();

	final LongAdder scanFailures = new LongAdder();

	final LongAdder scanPages = new LongAdder();

	final LongAdder scanRows = new LongAdder();

	final LongAdder flushes = new LongAdder();

	final LongAdder flushFailures = new LongAdder();

	final LongAdder syncs = new LongAdder();

	final LongAdder overloads = new LongAdder();

	final LongAdder purges = new LongAdder();

	final LongAdder purgeFailures = new LongAdder();

	final LongAdder tombstonesPurged = new LongAdder();

	/** The first background (periodic sync) failure; sticky. */
	final AtomicReference<@Nullable String> backgroundFailure = new AtomicReference<>();

	StorageStats snapshot(ConnectionPool pool) {
		Map<String, Long> counters = new LinkedHashMap<>();
		counters.put("gets", this.gets.sum());
		counters.put("get.failures", this.getFailures.sum());
		counters.put("upserts", this.upserts.sum());
		counters.put("upsert.failures", this.upsertFailures.sum());
		counters.put("upsert.retries", this.upsertRetries.sum());
		counters.put("scans", this.scans.sum());
		counters.put("scan.failures", this.scanFailures.sum());
		counters.put("scan.pages", this.scanPages.sum());
		counters.put("scan.rows", this.scanRows.sum());
		counters.put("flushes", this.flushes.sum());
		counters.put("flush.failures", this.flushFailures.sum());
		counters.put("syncs", this.syncs.sum());
		counters.put("overloads", this.overloads.sum());
		counters.put("purges", this.purges.sum());
		counters.put("purge.failures", this.purgeFailures.sum());
		counters.put("tombstones.purged", this.tombstonesPurged.sum());
		Map<String, Long> gauges = new LinkedHashMap<>();
		PoolMetrics metrics = pool.getMetrics().orElse(null);
		if (metrics != null) {
			gauges.put("pool.acquired", (long) metrics.acquiredSize());
			gauges.put("pool.idle", (long) metrics.idleSize());
			gauges.put("pool.pending", (long) metrics.pendingAcquireSize());
			gauges.put("pool.allocated", (long) metrics.allocatedSize());
			gauges.put("pool.max", (long) metrics.getMaxAllocatedSize());
		}
		return new StorageStats(H2Errors.BACKEND, counters, gauges, this.backgroundFailure.get());
	}

}
