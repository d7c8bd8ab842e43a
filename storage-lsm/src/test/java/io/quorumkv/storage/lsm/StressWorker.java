package io.quorumkv.storage.lsm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;

/**
 * One thread of the stress run: mixed operations on a shared store, writing only the keys
 * it owns ({@code k % threads == id}) and checking every read against the
 * {@link ExpectedState}: its own keys exactly (it is their only writer), other threads'
 * keys for being well formed and no newer than anything their owner wrote. Operations:
 * puts and deletes, {@code upsertAll} batches, late writes that must lose, gets, scans.
 */
final class StressWorker implements Runnable {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final Storage storage;

	private final ExpectedState expected;

	private final int id;

	private final int threads;

	private final SplittableRandom random;

	private final AtomicBoolean stop;

	private final AtomicLong operations;

	private final Consumer<String> anomalies;

	/** A deliberately broken engine: every 500th write is acknowledged, not applied. */
	private final boolean dropsWrites;

	private long writes;

	StressWorker(Storage storage, ExpectedState expected, int id, int threads, long seed, AtomicBoolean stop,
			AtomicLong operations, Consumer<String> anomalies, boolean dropsWrites) {
		this.storage = storage;
		this.expected = expected;
		this.id = id;
		this.threads = threads;
		this.random = new SplittableRandom(seed);
		this.stop = stop;
		this.operations = operations;
		this.anomalies = anomalies;
		this.dropsWrites = dropsWrites;
	}

	@Override
	public void run() {
		try {
			while (!this.stop.get()) {
				int r = this.random.nextInt(100);
				if (r < 35) {
					write(List.of(ownKey()), this.random.nextInt(6) == 0);
				}
				else if (r < 45) {
					Set<Integer> batch = new LinkedHashSet<>();
					for (int n = 2 + this.random.nextInt(5); n > 0; n--) {
						batch.add(ownKey());
					}
					write(List.copyOf(batch), this.random.nextInt(4) == 0);
				}
				else if (r < 50) {
					lateWrite(ownKey());
				}
				else if (r < 75) {
					int k = ownKey();
					checkOwn(k, this.storage.get(ExpectedState.key(k)).block(TIMEOUT));
				}
				else if (r < 90) {
					int k = this.random.nextInt(this.expected.keys());
					long before = this.expected.committed(k);
					checkAny(k, this.storage.get(ExpectedState.key(k)).block(TIMEOUT), before, "get");
				}
				else {
					scan();
				}
				this.operations.incrementAndGet();
			}
		}
		catch (RuntimeException ex) {
			this.anomalies.accept("worker " + this.id + " failed: " + ex);
		}
	}

	private int ownKey() {
		int owned = (this.expected.keys() - this.id + this.threads - 1) / this.threads;
		return this.id + this.threads * this.random.nextInt(owned);
	}

	/**
	 * Upserts new versions of {@code keys} (tombstones if {@code delete}) as one call.
	 */
	private void write(List<Integer> keys, boolean delete) {
		long now = System.currentTimeMillis() * 1000;
		List<Entry> entries = new ArrayList<>();
		long[] versions = new long[keys.size()];
		for (int i = 0; i < keys.size(); i++) {
			int k = keys.get(i);
			long ts = Math.max(ExpectedState.timestamp(this.expected.newest(k)) + 1, now);
			versions[i] = ExpectedState.version(ts, delete);
			this.expected.begin(k, versions[i]);
			entries.add(ExpectedState.entry(k, versions[i]));
		}
		if (!this.dropsWrites || ++this.writes % 500 != 0) {
			if (entries.size() == 1) {
				this.storage.upsert(entries.get(0)).block(TIMEOUT);
			}
			else {
				this.storage.upsertAll(entries).block(TIMEOUT);
			}
		}
		for (int i = 0; i < keys.size(); i++) {
			this.expected.commit(keys.get(i), versions[i]);
		}
	}

	/** A version older than the key's: it must lose, the key reads as before. */
	private void lateWrite(int k) {
		long committed = this.expected.committed(k);
		if (committed == 0) {
			return;
		}
		long ts = ExpectedState.timestamp(committed) - 1 - this.random.nextInt(1_000);
		this.storage.upsert(ExpectedState.entry(k, ExpectedState.version(ts, this.random.nextBoolean())))
			.block(TIMEOUT);
		checkOwn(k, this.storage.get(ExpectedState.key(k)).block(TIMEOUT));
	}

	private void checkOwn(int k, @Nullable Entry found) {
		long version = ExpectedState.versionOf(found);
		if (version != this.expected.committed(k) || (found != null && !ExpectedState.wellFormed(found))) {
			this.anomalies.accept("key " + k + " (own, worker " + this.id + "): read " + found + ", expected "
					+ describe(k, this.expected.committed(k)));
		}
	}

	/**
	 * Checks a read of any key: its owner's keys exactly; another thread's key must be
	 * well formed, at least as new as the version acknowledged before the read started
	 * ({@code before}) and no newer than any version its owner has written.
	 */
	private void checkAny(int k, @Nullable Entry found, long before, String how) {
		if (k % this.threads == this.id) {
			checkOwn(k, found);
			return;
		}
		long ts = ExpectedState.timestamp(ExpectedState.versionOf(found));
		boolean ok = (found == null) ? before == 0 : ExpectedState.wellFormed(found)
				&& ts >= ExpectedState.timestamp(before) && ts <= ExpectedState.timestamp(this.expected.newest(k));
		if (!ok) {
			this.anomalies.accept("key " + k + " (" + how + "): read " + found + ", acknowledged before the read "
					+ describe(k, before) + ", newest written " + describe(k, this.expected.newest(k)));
		}
	}

	/**
	 * A scan of up to 200 keys: in order, every key as {@link #checkAny} checks a get.
	 */
	private void scan() {
		int from = this.random.nextInt(this.expected.keys());
		int to = Math.min(this.expected.keys(), from + 1 + this.random.nextInt(200));
		long[] before = new long[to - from];
		for (int k = from; k < to; k++) {
			before[k - from] = this.expected.committed(k);
		}
		List<Entry> seen = this.storage
			.scan(ExpectedState.key(from), (to < this.expected.keys()) ? ExpectedState.key(to) : null)
			.collectList()
			.block(TIMEOUT);
		int next = from;
		for (Entry e : seen) {
			int k = ExpectedState.keyNumber(e.key());
			if (k < next || k >= to) {
				this.anomalies.accept("scan [" + from + ", " + to + "): key " + k + " out of order or range");
				return;
			}
			for (; next < k; next++) {
				checkAny(next, null, before[next - from], "scan");
			}
			checkAny(k, e, before[k - from], "scan");
			next = k + 1;
		}
		for (; next < to; next++) {
			checkAny(next, null, before[next - from], "scan");
		}
	}

	private static String describe(int k, long version) {
		return (version == 0) ? "absent" : ExpectedState.entry(k, version).toString();
	}

}
