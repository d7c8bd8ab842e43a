package io.quorumkv.storage.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;

/**
 * What a crashed writer acknowledged, kill after kill, and what of it a reopened store
 * lost. Per key only the newest acknowledged version counts: a store holding it, or a
 * newer version the writer sent, keeps the key; a store holding nothing or an older
 * version lost it. A version the writer never sent is damage and fails at once.
 */
final class CrashLedger {

	/** One acknowledged upsert: its key number, timestamp, when, in which run. */
	record Ack(int key, long timestamp, long millis, int run) {
	}

	private final List<Ack> acks = new ArrayList<>();

	private final Map<Integer, Ack> newest = new HashMap<>();

	private final List<Long> killedAt = new ArrayList<>();

	private final Map<Integer, Long> firstAckOfRun = new HashMap<>();

	private final Map<Integer, List<Ack>> byKey = new HashMap<>();

	private final Set<Ack> lost = new LinkedHashSet<>();

	/**
	 * Per lost key, how long before its kill the oldest write it lost was acknowledged.
	 */
	private final Map<Integer, Long> lossAge = new HashMap<>();

	void acked(Ack ack) {
		this.acks.add(ack);
		this.firstAckOfRun.putIfAbsent(ack.run(), ack.millis());
		this.byKey.computeIfAbsent(ack.key(), (k) -> new ArrayList<>()).add(ack);
		this.newest.merge(ack.key(), ack, (a, b) -> (b.timestamp() > a.timestamp()) ? b : a);
	}

	/** The current run's writer was killed now. */
	void killed(long millis) {
		this.killedAt.add(millis);
	}

	int acknowledged() {
		return this.acks.size();
	}

	int kills() {
		return this.killedAt.size();
	}

	/** Reads every acknowledged key back from the reopened store. */
	void check(Storage storage, Duration timeout) {
		for (Ack ack : this.newest.values()) {
			Entry read = storage.get(StorageCrashTest.key(ack.key())).block(timeout);
			if (read == null || read.timestamp() < ack.timestamp()) {
				this.lost.add(ack);
				// Not the newest write's age, which is always recent when keys are
				// overwritten often: the oldest acknowledged write the store does not
				// hold, which a store that lost a whole run shows as old.
				long held = (read != null) ? read.timestamp() : Long.MIN_VALUE;
				long age = this.byKey.get(ack.key())
					.stream()
					.filter((a) -> a.timestamp() > held)
					.mapToLong(this::ageAtKill)
					.max()
					.orElseThrow();
				this.lossAge.merge(ack.key(), age, Math::max);
			}
			else if (!read.equals(StorageCrashTest.expected(ack.key(), read.timestamp()))) {
				throw new AssertionError("key " + ack.key() + " holds a version never written: " + read);
			}
		}
	}

	List<Ack> lost() {
		return List.copyOf(this.lost);
	}

	/** How long before the kill of its run a write was acknowledged. */
	long ageAtKill(Ack ack) {
		return this.killedAt.get(ack.run()) - ack.millis();
	}

	/**
	 * For a lost key: how long before its kill the oldest acknowledged write of it that
	 * the store did not hold was acknowledged.
	 */
	long lossAge(Ack lost) {
		return this.lossAge.get(lost.key());
	}

	/** Acknowledged writes of {@code run} (from 0). */
	long acknowledgedInRun(int run) {
		return this.acks.stream().filter((a) -> a.run() == run).count();
	}

	/**
	 * Acknowledged writes of {@code run} (from 0) no older than {@code window} at its
	 * kill.
	 */
	long acknowledgedWithin(Duration window, int run) {
		return this.acks.stream().filter((a) -> a.run() == run && ageAtKill(a) <= window.toMillis()).count();
	}

	/**
	 * Whether the running writer's first acknowledgement is at least {@code spanMillis}
	 * before {@code nowMillis} (true for a zero span).
	 */
	boolean runSpans(long spanMillis, long nowMillis) {
		Long first = this.firstAckOfRun.get(kills());
		return spanMillis <= 0 || (first != null && nowMillis - first >= spanMillis);
	}

}
