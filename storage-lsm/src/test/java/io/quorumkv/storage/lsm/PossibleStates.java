package io.quorumkv.storage.lsm;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import org.jspecify.annotations.Nullable;

/**
 * The reference model of the property tests: per key, the set of entries the store may
 * hold (empty {@link Optional}: nothing). Sets, because two things make the store's state
 * unknown to a single-writer model:
 * <ul>
 * <li><b>tombstone purge</b> (when on): a tombstone past its grace may be dropped by a
 * compaction at any time, so a key holding one may hold nothing, and a later write older
 * than the tombstone then lands;</li>
 * <li><b>crashes</b>: writes since the last durable point that the fsync policy does not
 * require to survive may or may not have.</li>
 * </ul>
 * A read must return an entry of the set; it then narrows the set to what was read.
 * Without purge and crashes every set has one element and this is {@code ModelStorage}.
 */
final class PossibleStates {

	private final boolean purges;

	/** What a read may return now. */
	private final TreeMap<byte[], Set<Optional<Entry>>> current = new TreeMap<>(Keys.ORDER);

	/** What the store may hold at the last durable point (or recovery). */
	private final TreeMap<byte[], Set<Optional<Entry>>> durable = new TreeMap<>(Keys.ORDER);

	/** The writes since the last durable point, in order. */
	private final List<Entry> since = new ArrayList<>();

	PossibleStates(boolean purges) {
		this.purges = purges;
	}

	private static Set<Optional<Entry>> nothing() {
		Set<Optional<Entry>> s = new HashSet<>();
		s.add(Optional.empty());
		return s;
	}

	/** Keeps the greater of each possible state and {@code e}; then the purge closure. */
	private Set<Optional<Entry>> apply(Set<Optional<Entry>> states, Entry e) {
		Set<Optional<Entry>> next = new HashSet<>();
		for (Optional<Entry> s : states) {
			next.add(Optional.of(EntryOrder.max(s.orElse(null), e)));
		}
		return purgeable(next);
	}

	/** With purge on, a key holding a tombstone may hold nothing. */
	private Set<Optional<Entry>> purgeable(Set<Optional<Entry>> states) {
		if (this.purges && states.stream().anyMatch((s) -> s.isPresent() && s.get().isTombstone())) {
			states.add(Optional.empty());
		}
		return states;
	}

	void upsert(Entry e) {
		this.current.put(e.key(), apply(this.current.getOrDefault(e.key(), nothing()), e));
		this.since.add(e);
	}

	/**
	 * Every write so far is durable ({@code flush()}, a memtable flush, a clean close).
	 */
	void durable() {
		this.durable.clear();
		this.current.forEach((k, v) -> this.durable.put(k, new HashSet<>(v)));
		this.since.clear();
	}

	/**
	 * A crash: each write since the last durable point survives if {@code required} says
	 * so, and may have otherwise.
	 */
	void crashed(Predicate<Entry> required) {
		TreeMap<byte[], Set<Optional<Entry>>> after = new TreeMap<>(Keys.ORDER);
		this.durable.forEach((k, v) -> after.put(k, new HashSet<>(v)));
		for (Entry w : this.since) {
			Set<Optional<Entry>> before = after.getOrDefault(w.key(), nothing());
			Set<Optional<Entry>> applied = apply(before, w);
			if (!required.test(w)) {
				applied.addAll(before);
			}
			after.put(w.key(), applied);
		}
		this.current.clear();
		this.current.putAll(after);
		durable();
	}

	/**
	 * Checks a read of {@code key} and narrows the model to it.
	 * @return the anomaly, or null
	 */
	@Nullable String read(byte[] key, @Nullable Entry found) {
		Set<Optional<Entry>> states = this.current.getOrDefault(key, nothing());
		if (!states.contains(Optional.ofNullable(found))) {
			return Keys.toDisplayString(key) + ": read " + found + ", expected one of " + states;
		}
		Set<Optional<Entry>> read = purgeable(new HashSet<>(Set.of(Optional.ofNullable(found))));
		this.current.put(key, read);
		if (this.since.stream().noneMatch((w) -> Keys.compare(w.key(), key) == 0)) {
			this.durable.put(key, new HashSet<>(read));
		}
		return null;
	}

	/** Checks a scan of {@code [from, to)}: every key the model knows, and no other. */
	List<String> scan(byte[] from, byte @Nullable [] to, Map<byte[], Entry> found) {
		List<String> anomalies = new ArrayList<>();
		TreeSet<byte[]> keys = new TreeSet<>(Keys.ORDER);
		keys.addAll(this.current.keySet());
		keys.addAll(found.keySet());
		for (byte[] key : keys) {
			if (Keys.compare(key, from) >= 0 && (to == null || Keys.compare(key, to) < 0)) {
				String anomaly = read(key, found.get(key));
				if (anomaly != null) {
					anomalies.add(anomaly);
				}
			}
		}
		return anomalies;
	}

}
