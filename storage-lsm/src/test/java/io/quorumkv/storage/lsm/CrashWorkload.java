package io.quorumkv.storage.lsm;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;

/**
 * One thread of random operations on a store, recorded in a {@link CrashModel}: puts of a
 * few value lengths (so that overwrites go both in place and to new arrays), deletes,
 * {@code upsertAll} batches, late writes that must lose, reads checked against the model,
 * {@code flush()} (after which every acknowledged write is durable), forced memtable
 * flushes and full compactions, and (policy {@code INTERVAL}) one pause longer than the
 * sync window. Stops at the first failed operation: the power is gone, or the engine
 * failed (its sticky failure). An operation that fails on a live engine, with the power
 * on, is an anomaly of its own: a get, a scan or a compaction has no business failing
 * there.
 */
final class CrashWorkload {

	static final int KEYS = 48;

	private static final int[] VALUE_LENGTHS = { 0, 8, 40, 120, 200 };

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final LsmStorage storage;

	private final CrashModel model;

	private final Random random;

	private final FsyncPolicy policy;

	private final Duration window;

	private final List<String> anomalies = new ArrayList<>();

	/** Whether the power is gone (the file layer's crash), from {@link #run}. */
	private BooleanSupplier powerGone = () -> false;

	CrashWorkload(LsmStorage storage, CrashModel model, Random random, FsyncPolicy policy, Duration window) {
		this.storage = storage;
		this.model = model;
		this.random = random;
		this.policy = policy;
		this.window = window;
	}

	static byte[] key(int i) {
		return String.format("key-%03d", i).getBytes(StandardCharsets.UTF_8);
	}

	List<String> anomalies() {
		return this.anomalies;
	}

	/**
	 * Runs up to {@code operations} operations, fewer once {@code stop} says so or a
	 * write fails.
	 * @return the operations run
	 */
	long run(int operations, BooleanSupplier stop) {
		this.powerGone = stop;
		int pauseAt = (this.policy == FsyncPolicy.INTERVAL && this.random.nextBoolean())
				? this.random.nextInt(operations) : -1;
		long done = 0;
		for (int i = 0; i < operations && !stop.getAsBoolean() && this.anomalies.isEmpty(); i++) {
			done++;
			if (i == pauseAt) {
				sleep(this.window.plusMillis(100));
			}
			int r = this.random.nextInt(100);
			boolean ok;
			if (r < 40) {
				ok = write(List.of(put(this.model.tick())));
			}
			else if (r < 50) {
				ok = write(List.of(Entry.tombstone(key(this.random.nextInt(KEYS)), this.model.tick())));
			}
			else if (r < 60) {
				List<Entry> batch = new ArrayList<>();
				for (int n = 2 + this.random.nextInt(7); n > 0; n--) {
					long ts = this.model.tick();
					batch.add(this.random.nextInt(4) == 0 ? Entry.tombstone(key(this.random.nextInt(KEYS)), ts)
							: put(ts));
				}
				ok = write(batch);
			}
			else if (r < 64) {
				ok = write(List.of(put(this.model.past(this.random))));
			}
			else if (r < 80) {
				byte[] key = key(this.random.nextInt(KEYS));
				ok = call("get", () -> readCheck(key, this.storage.get(key).block(TIMEOUT), "get"));
			}
			else if (r < 84) {
				ok = scanCheck();
			}
			else if (r < 88) {
				ok = durable("flush()", () -> this.storage.flush().block(TIMEOUT));
			}
			else if (r < 92) {
				ok = durable("a forced flush", () -> join(this.storage.forceFlush()));
			}
			else if (r < 95) {
				ok = call("a forced compaction", () -> join(this.storage.forceCompaction()));
			}
			else {
				ok = write(List.of(put(this.model.tick())));
			}
			if (!ok) {
				break;
			}
		}
		return done;
	}

	private Entry put(long timestamp) {
		byte[] value = new byte[VALUE_LENGTHS[this.random.nextInt(VALUE_LENGTHS.length)]];
		this.random.nextBytes(value);
		return Entry.value(key(this.random.nextInt(KEYS)), value, timestamp);
	}

	private boolean write(List<Entry> entries) {
		long batch = this.model.issue(entries);
		return call("a write", () -> {
			if (entries.size() == 1) {
				this.storage.upsert(entries.get(0)).block(TIMEOUT);
			}
			else {
				this.storage.upsertAll(entries).block(TIMEOUT);
			}
			this.model.acked(batch, System.nanoTime());
		});
	}

	/**
	 * Runs a durable point: a {@code flush()}, or a forced memtable flush that left the
	 * engine healthy (a failed background flush does not fail the hook's future).
	 */
	private boolean durable(String what, Runnable action) {
		boolean ok = call(what, action) && this.storage.stats().failure() == null;
		if (ok) {
			this.model.durable();
		}
		return ok;
	}

	private boolean scanCheck() {
		int a = this.random.nextInt(KEYS);
		int b = this.random.nextInt(KEYS + 1);
		byte[] from = key(Math.min(a, b));
		byte[] to = (Math.max(a, b) < KEYS) ? key(Math.max(a, b)) : null;
		Map<byte[], Entry> seen = new TreeMap<>(Keys.ORDER);
		boolean ok = call("scan",
				() -> this.storage.scan(from, to).collectList().block(TIMEOUT).forEach((e) -> seen.put(e.key(), e)));
		if (ok) {
			for (byte[] key : this.model.keys()) {
				if (Keys.compare(key, from) >= 0 && (to == null || Keys.compare(key, to) < 0)) {
					readCheck(key, seen.get(key), "scan");
				}
			}
		}
		return ok;
	}

	private void readCheck(byte[] key, @org.jspecify.annotations.Nullable Entry got, String how) {
		String anomaly = this.model.check(key, got, this.model::isAcked);
		if (anomaly != null) {
			this.anomalies.add(how + " before the crash: " + anomaly);
		}
	}

	/**
	 * Runs {@code action}; false when it failed. A failure is expected once the power is
	 * gone or the engine has failed (a fault it was given); otherwise it is recorded as
	 * an anomaly.
	 */
	private boolean call(String what, Runnable action) {
		try {
			action.run();
			return true;
		}
		catch (RuntimeException ex) {
			if (!this.powerGone.getAsBoolean() && this.storage.stats().failure() == null) {
				this.anomalies.add(what + " failed on a live engine with the power on: " + ex);
			}
			return false;
		}
	}

	private static void join(java.util.concurrent.CompletableFuture<Void> future) {
		try {
			future.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
