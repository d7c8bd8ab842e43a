package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Lock;
import java.util.function.BooleanSupplier;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Throttle;
import io.quorumkv.storage.lsm.compaction.CompactionTask;
import io.quorumkv.storage.lsm.compaction.Compactor;
import io.quorumkv.storage.lsm.sstable.SsTable;
import org.jspecify.annotations.Nullable;

/**
 * Runs one compaction task on the compaction thread: merges (or, for a trivial move, only
 * re-levels) its tables, publishes the result through the manifest, then hands the inputs
 * to their last reader for unmapping and deletion. Builds the tombstone probe: a
 * tombstone is purged only when the storage's purge policy allows it and no table or
 * memtable outside the task may hold a version it shadows (key range, minimum timestamp
 * and bloom filter of each table; a lookup in each memtable), neither when the merge
 * decides nor when the result is published (the late-write gate,
 * {@link LsmEngine#lateWrites}).
 */
final class CompactionRunner {

	private final LsmEngine engine;

	private final ManifestEditor manifest;

	private final Compactor compactor;

	private final BooleanSupplier cancelled;

	CompactionRunner(LsmEngine engine, ManifestEditor manifest, Compactor compactor, BooleanSupplier cancelled) {
		this.engine = engine;
		this.manifest = manifest;
		this.compactor = compactor;
		this.cancelled = cancelled;
	}

	/** Runs {@code task} at the options' compaction throughput. */
	void run(CompactionTask task) throws IOException {
		run(task, false, null, paced(task));
	}

	/**
	 * The throttle of {@code task} under {@link LsmOptions#compactionThroughput()}: the
	 * bytes a second as entries a second, at the inputs' bytes per entry.
	 */
	Throttle paced(CompactionTask task) {
		long bytesPerSecond = this.engine.options.compactionThroughput();
		long bytes = task.inputBytes();
		long entries = 0;
		for (SsTable table : task.all()) {
			entries += table.properties().entryCount();
		}
		if (bytesPerSecond <= 0 || bytes <= 0 || entries <= 0) {
			return Throttle.NONE;
		}
		return new Throttle(Math.max(1, (long) ((double) bytesPerSecond * entries / bytes)));
	}

	/**
	 * Runs {@code task}, leaving out every entry whose key {@code drop} accepts. With
	 * {@code rewrite} or a {@code drop} filter even a trivial move is merged like any
	 * other task, so that an operator's full compaction purges what may be purged and the
	 * filter sees every entry, even when everything is in one table.
	 * @param throttle the rate of entries merged
	 * @return the entries dropped
	 */
	long run(CompactionTask task, boolean rewrite, java.util.function.@Nullable Predicate<byte[]> drop,
			Throttle throttle) throws IOException {
		if (task.isTrivialMove() && !rewrite && drop == null) {
			this.engine.manifestLock.lock();
			try {
				this.manifest.publish((s) -> s.withLevels(s.levels().apply(task, task.inputs())));
			}
			finally {
				this.engine.manifestLock.unlock();
			}
			this.engine.stats.compactions.increment();
			this.engine.signalFlushed();
			return 0;
		}
		// A merge keeps the newest version of each key: not while a snapshot holds them.
		this.engine.holds.awaitNone(this.cancelled);
		this.engine.stats.compactionsRunning.increment();
		try {
			return merge(task, drop, throttle);
		}
		finally {
			this.engine.stats.compactionsRunning.decrement();
		}
	}

	private long merge(CompactionTask task, java.util.function.@Nullable Predicate<byte[]> drop, Throttle throttle)
			throws IOException {
		LsmState s = this.engine.state.get();
		Set<SsTable> inside = new HashSet<>(task.all());
		PurgePolicy policy = this.engine.purgePolicy;
		Compactor.OlderVersionProbe outsideProbe = probe(s, inside);
		// A tombstone the policy does not allow is treated as shadowing an older version:
		// the compactor keeps it. The late-write check below needs no policy (what it
		// re-checks the policy has already allowed).
		Compactor.OlderVersionProbe probe = (key, ts) -> !policy.mayPurge(key, ts)
				|| outsideProbe.mayHoldOlder(key, ts);
		long nowMicros = this.engine.nowMicros();
		long graceMicros = saturatedMicros(this.engine.options.tombstoneGracePeriod());
		long purgeBefore = (nowMicros - graceMicros > nowMicros) ? Long.MIN_VALUE : nowMicros - graceMicros;
		Compactor.Result result = this.compactor.run(task, this.engine.nextFileNumber::getAndIncrement, nowMicros,
				purgeBefore, probe, this.cancelled, drop, throttle, () -> level0Waits(inside));
		// A write older than a purged tombstone may have arrived since the probe: such
		// writes hold the late-write gate's read side, so under its write side the
		// purged tombstones are checked again against the state of now, and the result
		// is dropped (the next compaction keeps them) if one shadows such a write.
		Lock gate = result.purged().isEmpty() ? null : this.engine.lateWrites.writeLock();
		if (gate != null) {
			gate.lock();
		}
		try {
			if (gate != null && shadowsALateWrite(result.purged(), inside)) {
				// Nothing published: the filtered keys stay until the next retain.
				discard(result.outputs());
				return 0;
			}
			this.engine.manifestLock.lock();
			try {
				this.manifest.publish((st) -> st.withLevels(st.levels().apply(task, result.outputs())));
			}
			catch (IOException | RuntimeException ex) {
				// Unmapped, not deleted: the manifest may name them all the same (renamed
				// into place before its folder's force failed). Recovery deletes the
				// tables the manifest on disk does not name.
				result.outputs().forEach(SsTable::release);
				throw ex;
			}
			finally {
				this.engine.manifestLock.unlock();
			}
		}
		finally {
			if (gate != null) {
				gate.unlock();
			}
		}
		for (SsTable t : task.all()) {
			t.markObsolete();
			t.release();
		}
		EngineStats stats = this.engine.stats;
		stats.compactions.increment();
		stats.compactionBytesRead.add(result.bytesRead());
		stats.compactionBytesWritten.add(result.bytesWritten());
		stats.tombstonesPurged.add(result.tombstonesPurged());
		stats.expiredConverted.add(result.expired());
		this.engine.signalFlushed();
		return result.dropped();
	}

	/**
	 * Whether the level-0 tables flushed since a compaction began (those outside it) have
	 * reached the compaction trigger: a paced compaction (a clean-up's) holds the
	 * compaction thread, and the writers would stall once level 0 reaches twice the
	 * trigger, so it stops pacing itself while they wait.
	 */
	private boolean level0Waits(Set<SsTable> inside) {
		long waiting = this.engine.state.get().levels().level(0).stream().filter((t) -> !inside.contains(t)).count();
		return waiting >= this.engine.options.level0CompactionTrigger();
	}

	/**
	 * Whether a source outside the compaction may hold a version older than a tombstone
	 * it merges: memtables by lookup; other tables by key range, minimum timestamp and
	 * bloom filter.
	 */
	private static Compactor.OlderVersionProbe probe(LsmState s, Set<SsTable> inside) {
		List<SsTable> outside = s.levels().all().stream().filter((t) -> !inside.contains(t)).toList();
		List<MemTableSlot> memtables = s.memtables();
		return (key, ts) -> {
			for (MemTableSlot slot : memtables) {
				Entry e = slot.memtable().get(key);
				if (e != null && e.timestamp() <= ts) {
					return true;
				}
			}
			for (SsTable t : outside) {
				if (t.properties().minTimestamp() <= ts && t.properties().mayContainKey(key) && mayContain(t, key)) {
					return true;
				}
			}
			return false;
		};
	}

	/**
	 * The table's bloom filter, read pinned (it lives in the table's arena); a table
	 * released meanwhile answers yes, the safe answer.
	 */
	private static boolean mayContain(SsTable table, byte[] key) {
		if (!table.tryRetain()) {
			return true;
		}
		try {
			return table.mayContain(key);
		}
		finally {
			table.release();
		}
	}

	/** The probe again, on the state of now (late writes are held out meanwhile). */
	private boolean shadowsALateWrite(List<Entry> purged, Set<SsTable> inside) {
		assert this.engine.lateWrites.isWriteLockedByCurrentThread();
		Compactor.OlderVersionProbe now = probe(this.engine.state.get(), inside);
		for (Entry tombstone : purged) {
			if (now.mayHoldOlder(tombstone.key(), tombstone.timestamp())) {
				return true;
			}
		}
		return false;
	}

	private static void discard(List<SsTable> outputs) {
		for (SsTable t : outputs) {
			t.markObsolete();
			t.release();
		}
	}

	static long saturatedMicros(Duration d) {
		try {
			return Math.multiplyExact(d.getSeconds(), 1_000_000L) + d.getNano() / 1000;
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE;
		}
	}

}
