package io.quorumkv.storage.lsm.memtable;

import java.util.Iterator;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory sorted write buffer: per key only the greatest entry by
 * {@link EntryOrder}, replaced with compare-and-set so that concurrent upserts never lose
 * an update. Tracks its size (entry bytes plus a per-entry overhead) to decide when to
 * freeze, and its timestamp range for compaction's tombstone checks.
 */
public final class MemTable {

	/** Skip-list node, Entry object and array headers, roughly. */
	static final int ENTRY_OVERHEAD = 64;

	private final ConcurrentSkipListMap<byte[], Entry> map = new ConcurrentSkipListMap<>(Keys.ORDER);

	private final AtomicLong bytes = new AtomicLong();

	private final AtomicLong minTimestamp = new AtomicLong(Long.MAX_VALUE);

	private final AtomicLong maxTimestamp = new AtomicLong(Long.MIN_VALUE);

	/**
	 * Keeps {@code entry} if it supersedes the kept one.
	 * @return whether it was kept
	 */
	public boolean put(Entry entry) {
		this.minTimestamp.accumulateAndGet(entry.timestamp(), Math::min);
		this.maxTimestamp.accumulateAndGet(entry.timestamp(), Math::max);
		// One search of the skip list for a key already present (compute finds the node
		// and swaps its value with a compare-and-set; get-then-replace searched twice).
		// The function may run again after a lost race; the last run is the one that won.
		Entry[] replaced = new Entry[1];
		Entry kept = this.map.compute(entry.key(), (key, current) -> {
			replaced[0] = current;
			return (current == null || EntryOrder.supersedes(entry, current)) ? entry : current;
		});
		Entry previous = replaced[0];
		if (kept != entry || previous == entry) {
			return false;
		}
		this.bytes.addAndGet((previous == null) ? entry.sizeInBytes() + ENTRY_OVERHEAD
				: entry.sizeInBytes() - previous.sizeInBytes());
		return true;
	}

	public @Nullable Entry get(byte[] key) {
		return this.map.get(key);
	}

	/** Entries with {@code from <= key < to} ({@code to == null}: open), in key order. */
	public Iterator<Entry> iterator(byte[] from, byte @Nullable [] to) {
		if (to != null && Keys.compare(from, to) >= 0) {
			return java.util.Collections.emptyIterator();
		}
		return ((to != null) ? this.map.subMap(from, true, to, false) : this.map.tailMap(from, true)).values()
			.iterator();
	}

	/** All entries in key order. */
	public Iterator<Entry> iterator() {
		return this.map.values().iterator();
	}

	public long sizeInBytes() {
		return this.bytes.get();
	}

	public boolean isEmpty() {
		return this.map.isEmpty();
	}

	public int count() {
		return this.map.size();
	}

	public long minTimestamp() {
		return this.minTimestamp.get();
	}

	public long maxTimestamp() {
		return this.maxTimestamp.get();
	}

}
