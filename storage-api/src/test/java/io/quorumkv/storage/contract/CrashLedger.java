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

	private final Set<Ack> lost = new LinkedHashSet<>();

	void acked(Ack ack) {
		this.acks.add(ack);
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

	/** Acknowledged writes no older than {@code window} at the kill of their run. */
	long acknowledgedWithin(Duration window) {
		return this.acks.stream().filter((a) -> ageAtKill(a) <= window.toMillis()).count();
	}

}
