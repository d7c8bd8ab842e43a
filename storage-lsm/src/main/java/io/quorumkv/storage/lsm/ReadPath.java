package io.quorumkv.storage.lsm;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.compaction.Levels;
import io.quorumkv.storage.lsm.iterator.ConcatIterator;
import io.quorumkv.storage.lsm.iterator.EntryIterator;
import io.quorumkv.storage.lsm.iterator.MergingIterator;
import io.quorumkv.storage.lsm.sstable.SsTable;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * Point lookups and scans over one {@link LsmState}.
 *
 * <p>
 * A lookup reads every memtable, then level-0 tables and at most one table per deeper
 * level, keeping the greatest version by {@link EntryOrder}. It skips a table whose key
 * range misses the key, whose bloom filter rules the key out, or whose newest timestamp
 * is older than a version already found (that table cannot win). It pins each table it
 * reads; a table released meanwhile by compaction means the state moved on, and the
 * lookup restarts on the new state.
 *
 * <p>
 * Both answer the greatest version as seen at the engine's instant
 * ({@link Entry#asSeenAt}): an expired value as the tombstone of its timestamp. The
 * greatest version is picked first, then judged, as a compaction does.
 */
final class ReadPath {

	private final AtomicReference<LsmState> state;

	private final EngineStats stats;

	private final Runnable checkOpen;

	private final LongSupplier nowMicros;

	/**
	 * @param checkOpen throws once the engine is closed: a table that cannot be pinned
	 * then will never be pinnable again, and a retry would spin
	 * @param nowMicros the instant expiry is judged at
	 */
	ReadPath(AtomicReference<LsmState> state, EngineStats stats, Runnable checkOpen, LongSupplier nowMicros) {
		this.state = state;
		this.stats = stats;
		this.checkOpen = checkOpen;
		this.nowMicros = nowMicros;
	}

	/** The kept entry of {@code key} as seen now (an expired value as its tombstone). */
	@Nullable Entry get(byte[] key) {
		Entry kept = greatest(key);
		return (kept != null) ? kept.asSeenAt(this.nowMicros.getAsLong()) : null;
	}

	/** The greatest version of {@code key} in memtables and tables. */
	private @Nullable Entry greatest(byte[] key) {
		while (true) {
			LsmState s = this.state.get();
			Entry best = null;
			for (MemTableSlot slot : s.memtables()) {
				best = EntryOrder.max(best, slot.memtable().get(key));
			}
			Levels levels = s.levels();
			boolean restart = false;
			for (int level = 0; level < levels.count() && !restart; level++) {
				List<SsTable> candidates = (level == 0) ? levels.level(0) : candidate(levels.level(level), key);
				for (SsTable table : candidates) {
					if (best != null && best.timestamp() > table.maxTimestamp()) {
						continue;
					}
					if (!table.properties().mayContainKey(key)) {
						continue;
					}
					// Pinned before its filter is read: the filter lives in the table's
					// arena.
					if (!table.tryRetain()) {
						restart = true;
						break;
					}
					try {
						if (!table.mayContain(key)) {
							this.stats.bloomUseful.increment();
							continue;
						}
						Entry found = table.find(key);
						this.stats.tablesConsulted.increment();
						if (found == null) {
							this.stats.bloomFalsePositives.increment();
						}
						best = EntryOrder.max(best, found);
					}
					finally {
						table.release();
					}
				}
			}
			if (!restart) {
				return best;
			}
			this.checkOpen.run();
		}
	}

	/** The table of a sorted level whose range may hold {@code key}. */
	private static List<SsTable> candidate(List<SsTable> level, byte[] key) {
		int lo = 0;
		int hi = level.size();
		while (lo < hi) {
			int mid = (lo + hi) >>> 1;
			if (Keys.compare(level.get(mid).maxKey(), key) < 0) {
				lo = mid + 1;
			}
			else {
				hi = mid;
			}
		}
		return (lo < level.size() && Keys.compare(level.get(lo).minKey(), key) <= 0) ? List.of(level.get(lo))
				: List.of();
	}

	/**
	 * A lazy scan with backpressure (one entry decoded per request) over a pinned
	 * snapshot: the tables it reads stay mapped until the scan completes, fails or is
	 * cancelled. Expiry is judged at the instant the scan is subscribed. Only the entries
	 * whose key {@code keys} accepts come out: every source (memtables and tables)
	 * filters by key, the tables before they copy a value, and since the answer depends
	 * on the key alone the merge still sees every version of an accepted key.
	 */
	Flux<Entry> scan(byte[] from, byte @Nullable [] to, Predicate<byte[]> keys) {
		if (to != null && Keys.compare(from, to) >= 0) {
			return Flux.empty();
		}
		return Flux.defer(() -> {
			long now = this.nowMicros.getAsLong();
			return scan(from, to, keys, now);
		});
	}

	private Flux<Entry> scan(byte[] from, byte @Nullable [] to, Predicate<byte[]> keys, long now) {
		return Flux.using(this::pin,
				(snapshot) -> Flux.generate(() -> snapshot.iterator(from, to, keys), (it, sink) -> {
					Entry e = it.current();
					if (e == null || (to != null && Keys.compare(e.key(), to) >= 0)) {
						sink.complete();
					}
					else {
						sink.next(e.asSeenAt(now));
						it.next();
					}
					return it;
				}, EntryIterator::close), Snapshot::release);
	}

	/** Pins every table of the current state. */
	Snapshot pin() {
		while (true) {
			LsmState s = this.state.get();
			List<SsTable> pinned = new ArrayList<>();
			boolean complete = true;
			for (SsTable table : s.levels().all()) {
				if (!table.tryRetain()) {
					complete = false;
					break;
				}
				pinned.add(table);
			}
			if (complete) {
				return new Snapshot(s, pinned);
			}
			pinned.forEach(SsTable::release);
			this.checkOpen.run();
		}
	}

	/** A state whose tables are pinned until {@link #release()}. */
	static final class Snapshot {

		private final LsmState state;

		private final List<SsTable> pinned;

		private final AtomicBoolean released = new AtomicBoolean();

		Snapshot(LsmState state, List<SsTable> pinned) {
			this.state = state;
			this.pinned = pinned;
		}

		EntryIterator iterator(byte[] from, byte @Nullable [] to, Predicate<byte[]> keys) {
			List<EntryIterator> sources = new ArrayList<>();
			for (MemTableSlot slot : this.state.memtables()) {
				sources.add(EntryIterator.of(slot.memtable().iterator(from, to), keys));
			}
			Levels levels = this.state.levels();
			for (SsTable table : levels.level(0)) {
				sources.add(table.iterator(from, keys));
			}
			for (int i = 1; i < levels.count(); i++) {
				List<SsTable> inRange = levels.level(i)
					.stream()
					.filter((t) -> Keys.compare(t.maxKey(), from) >= 0
							&& (to == null || Keys.compare(t.minKey(), to) < 0))
					.toList();
				if (!inRange.isEmpty()) {
					sources.add(new ConcatIterator<>(inRange, (t) -> t.iterator(from, keys)));
				}
			}
			return new MergingIterator(sources);
		}

		void release() {
			if (this.released.compareAndSet(false, true)) {
				this.pinned.forEach(SsTable::release);
			}
		}

	}

}
