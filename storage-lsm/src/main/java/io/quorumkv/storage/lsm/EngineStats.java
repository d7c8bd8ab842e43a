package io.quorumkv.storage.lsm;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import io.quorumkv.storage.StorageStats;
import io.quorumkv.storage.lsm.compaction.LeveledPlanner;
import io.quorumkv.storage.lsm.compaction.Levels;
import io.quorumkv.storage.lsm.sstable.BlockCache;
import io.quorumkv.storage.lsm.sstable.BlockCodec;
import io.quorumkv.storage.lsm.sstable.SsTable;
import io.quorumkv.storage.lsm.sstable.TableFormat;
import org.jspecify.annotations.Nullable;

/** The engine's counters, and the gauges read off a state for {@link StorageStats}. */
final class EngineStats {

	final LongAdder upserts = new LongAdder();

	final LongAdder gets = new LongAdder();

	final LongAdder scans = new LongAdder();

	final LongAdder flushes = new LongAdder();

	final LongAdder flushBytes = new LongAdder();

	final LongAdder compactions = new LongAdder();

	/**
	 * Compactions merging now (a trivial move is never counted: it only edits the
	 * manifest).
	 */
	final LongAdder compactionsRunning = new LongAdder();

	final LongAdder compactionBytesRead = new LongAdder();

	final LongAdder compactionBytesWritten = new LongAdder();

	final LongAdder tombstonesPurged = new LongAdder();

	final LongAdder expiredConverted = new LongAdder();

	final LongAdder walBytes = new LongAdder();

	final LongAdder bloomUseful = new LongAdder();

	final LongAdder bloomFalsePositives = new LongAdder();

	final LongAdder tablesConsulted = new LongAdder();

	final LongAdder stallNanos = new LongAdder();

	/** Flushed tables linked into {@code backups/} (incremental backups). */
	final LongAdder backupLinks = new LongAdder();

	/** Flushed tables that could not be linked into {@code backups/}. */
	final LongAdder backupFailures = new LongAdder();

	/** WAL segments linked into {@code backups/wal/} (incremental backups). */
	final LongAdder backupWalLinks = new LongAdder();

	/** WAL segments that could not be linked into {@code backups/wal/}. */
	final LongAdder backupWalFailures = new LongAdder();

	StorageStats snapshot(LsmState state, LeveledPlanner planner, BlockCache cache, @Nullable Throwable failure) {
		Map<String, Long> counters = new LinkedHashMap<>();
		counters.put("upserts", this.upserts.sum());
		counters.put("gets", this.gets.sum());
		counters.put("scans", this.scans.sum());
		counters.put("flush.count", this.flushes.sum());
		counters.put("flush.bytes", this.flushBytes.sum());
		counters.put("compaction.count", this.compactions.sum());
		counters.put("compaction.bytes.read", this.compactionBytesRead.sum());
		counters.put("compaction.bytes.written", this.compactionBytesWritten.sum());
		counters.put("compaction.tombstones.purged", this.tombstonesPurged.sum());
		counters.put("compaction.expired", this.expiredConverted.sum());
		counters.put("wal.bytes", this.walBytes.sum());
		counters.put("bloom.useful", this.bloomUseful.sum());
		counters.put("bloom.false.positives", this.bloomFalsePositives.sum());
		counters.put("get.tables.consulted", this.tablesConsulted.sum());
		counters.put("stall.nanos", this.stallNanos.sum());
		counters.put("backup.links", this.backupLinks.sum());
		counters.put("backup.failures", this.backupFailures.sum());
		counters.put("backup.wal.links", this.backupWalLinks.sum());
		counters.put("backup.wal.failures", this.backupWalFailures.sum());
		counters.put("block.cache.hits", cache.hits());
		counters.put("block.cache.misses", cache.misses());
		counters.put("block.cache.evictions", cache.evictions());
		Map<String, Long> gauges = new LinkedHashMap<>();
		long memtableBytes = 0;
		long walBytesOnDisk = 0;
		for (MemTableSlot slot : state.memtables()) {
			memtableBytes += slot.memtable().sizeInBytes();
			walBytesOnDisk += slot.wal().writtenPosition() + slot.replayedBytes();
		}
		gauges.put("memtable.bytes", memtableBytes);
		gauges.put("memtables.immutable", (long) state.immutables().size());
		Levels levels = state.levels();
		long tableBytes = 0;
		long tables = 0;
		long[] byFormat = new long[TableFormat.CURRENT + 1];
		long[] byCodec = new long[BlockCodec.values().length];
		long rawData = 0;
		long storedData = 0;
		for (int i = 0; i < levels.count(); i++) {
			gauges.put("tables.level." + i, (long) levels.level(i).size());
			tables += levels.level(i).size();
			tableBytes += levels.bytes(i);
			for (SsTable table : levels.level(i)) {
				byFormat[table.formatVersion()]++;
				byCodec[table.properties().compression()]++;
				rawData += table.properties().rawDataBytes();
				storedData += table.properties().storedDataBytes();
			}
		}
		for (int version = TableFormat.VERSION_1; version <= TableFormat.CURRENT; version++) {
			gauges.put("tables.format." + version, byFormat[version]);
		}
		for (BlockCodec codec : BlockCodec.values()) {
			gauges.put("tables.codec." + codec.name().toLowerCase(java.util.Locale.ROOT), byCodec[codec.id()]);
		}
		gauges.put("tables.data.raw.bytes", rawData);
		gauges.put("tables.data.stored.bytes", storedData);
		gauges.put("tables", tables);
		gauges.put("disk.bytes", tableBytes + walBytesOnDisk);
		gauges.put("compaction.pending.bytes", planner.pendingBytes(levels));
		gauges.put("compaction.running", this.compactionsRunning.sum());
		gauges.put("block.cache.bytes", cache.size());
		gauges.put("block.cache.capacity", cache.capacity());
		gauges.put("block.cache.allocated.bytes", cache.allocatedBytes());
		return new StorageStats(LsmEngine.BACKEND, counters, gauges, (failure != null) ? failure.toString() : null);
	}

}
