package io.quorumkv.storage.lsm;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import org.jspecify.annotations.Nullable;

/**
 * What a store may hold after a crash, from what it was asked to write and what it
 * acknowledged, when. Per key: a baseline that must survive (the state checked after the
 * last recovery, plus writes made durable since by a completed {@code flush()}), and the
 * writes issued since. After a crash, the writes the fsync policy requires must survive;
 * the others may or may not have. A recovered entry is acceptable if and only if it is
 * the greatest (by {@link EntryOrder}) of the required writes together with some subset
 * of the others: so either exactly the greatest required one (absent when there is none),
 * or one of the others that beats it. Anything else is an anomaly: a lost write, a
 * resurrected older version, a value nobody wrote.
 */
final class CrashModel {

	/** One entry of one upsert (or batch) issued to the store. */
	record Write(Entry entry, long batch) {
	}

	private final NavigableMap<byte[], @Nullable Entry> baseline = new TreeMap<>(Keys.ORDER);

	private final NavigableMap<byte[], List<Write>> since = new TreeMap<>(Keys.ORDER);

	private final List<Long> ackedAt = new ArrayList<>();

	private long writes;

	/**
	 * Hybrid-logical-clock-like timestamps (microseconds from now on): tombstones stay
	 * within the engine's purge grace, so a deleted key reads as its tombstone.
	 */
	private final long start = System.currentTimeMillis() * 1000;

	private long clock = this.start;

	/** A timestamp greater than every one handed out before. */
	long tick() {
		return ++this.clock;
	}

	/** A timestamp handed out before (a late write that must lose). */
	long past(java.util.Random random) {
		return this.start + (long) (random.nextDouble() * (this.clock - this.start));
	}

	/**
	 * Records the entries of one upsert (or batch) about to be issued.
	 * @return the batch number to acknowledge
	 */
	long issue(List<Entry> entries) {
		long batch = this.ackedAt.size();
		this.ackedAt.add(Long.MAX_VALUE);
		for (Entry e : entries) {
			this.since.computeIfAbsent(e.key(), (k) -> new ArrayList<>()).add(new Write(e, batch));
			this.writes++;
		}
		return batch;
	}

	/** The batch completed successfully at {@code nanos} ({@link System#nanoTime}). */
	void acked(long batch, long nanos) {
		this.ackedAt.set((int) batch, nanos);
	}

	boolean isAcked(Write w) {
		return this.ackedAt.get((int) w.batch()) != Long.MAX_VALUE;
	}

	long ackedAt(Write w) {
		return this.ackedAt.get((int) w.batch());
	}

	/** Entries issued so far, for reports. */
	long writes() {
		return this.writes;
	}

	/** Every write acknowledged so far is durable now (a {@code flush()} completed). */
	void durable() {
		for (Map.Entry<byte[], List<Write>> e : this.since.entrySet()) {
			List<Write> left = new ArrayList<>();
			for (Write w : e.getValue()) {
				if (isAcked(w)) {
					this.baseline.put(e.getKey(), EntryOrder.max(this.baseline.get(e.getKey()), w.entry()));
				}
				else {
					left.add(w);
				}
			}
			e.setValue(left);
		}
	}

	/** After a successful recovery: what it found is the new baseline. */
	void recovered(Map<byte[], Entry> found) {
		this.baseline.clear();
		this.since.clear();
		this.baseline.putAll(found);
	}

	/** Every key ever written or found. */
	TreeSet<byte[]> keys() {
		TreeSet<byte[]> all = new TreeSet<>(Keys.ORDER);
		all.addAll(this.baseline.keySet());
		all.addAll(this.since.keySet());
		return all;
	}

	/**
	 * Checks one key's entry found in the store.
	 * @param required whether a write since the baseline must be there
	 * @return the anomaly, or null when acceptable
	 */
	@Nullable String check(byte[] key, @Nullable Entry found, Predicate<Write> required) {
		Entry floor = this.baseline.get(key);
		List<Entry> optional = new ArrayList<>();
		for (Write w : this.since.getOrDefault(key, List.of())) {
			if (required.test(w)) {
				floor = EntryOrder.max(floor, w.entry());
			}
			else {
				optional.add(w.entry());
			}
		}
		if (found == null ? floor == null : found.equals(floor)) {
			return null;
		}
		if (found != null && optional.contains(found) && EntryOrder.supersedes(found, floor)) {
			return null;
		}
		String what = (found == null) ? "lost (absent)"
				: (floor != null && EntryOrder.INSTANCE.compare(found, floor) < 0)
						? "lost (an older version is back): " + found : "never written: " + found;
		return Keys.toDisplayString(key) + ": " + what + "; must be at least " + floor + " (" + optional.size()
				+ " writes that may or may not be there)";
	}

	/** Checks every key against a full scan of the store. */
	List<String> checkAll(Map<byte[], Entry> found, Predicate<Write> required) {
		List<String> anomalies = new ArrayList<>();
		TreeSet<byte[]> all = keys();
		all.addAll(found.keySet());
		for (byte[] key : all) {
			String anomaly = check(key, found.get(key), required);
			if (anomaly != null) {
				anomalies.add(anomaly);
			}
		}
		return anomalies;
	}

}
