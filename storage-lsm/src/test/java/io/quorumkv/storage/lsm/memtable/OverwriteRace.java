package io.quorumkv.storage.lsm.memtable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * One round of a latched race on a few keys: a writer of same-length versions (written
 * over the key's version record in place), a writer of versions of changing lengths (a
 * new record when one does not fit), and readers, all released at once. Versions are
 * recognisable: a timestamp's parity says which writer sent it, and its value's length
 * and every byte follow from timestamp and key. Checks: no read is torn (a mix of two
 * versions), none goes back in time for its reader, and after the round each key holds
 * its greatest version.
 */
public final class OverwriteRace {

	/** What the race runs on: a memtable, a store, or a broken double. */
	public interface Target {

		void write(int key, Entry entry);

		@Nullable Entry read(int key);

		/**
		 * Runs beside the writers, again and again until they are done (a flush, say).
		 */
		default void alongside() {
		}

	}

	public static final int KEYS = 4;

	private OverwriteRace() {
	}

	public static byte[] key(int k) {
		return new byte[] { 'k', (byte) k };
	}

	/** The version of key {@code k} at {@code ts}: even from the same-length writer. */
	public static Entry version(int k, long ts) {
		int length = (ts % 2 == 0) ? 48 : (int) ((ts / 2) % 7) * 40;
		byte[] value = new byte[length];
		Arrays.fill(value, (byte) (ts * 31 + k));
		return Entry.value(key(k), value, ts);
	}

	static boolean wellFormed(int k, Entry e) {
		return e.equals(version(k, e.timestamp()));
	}

	/**
	 * Runs one round: each writer writes {@code writes} versions round-robin over the
	 * keys, {@code readers} read until the writers are done.
	 * @return the anomalies seen
	 */
	public static List<String> round(Target target, int writes, int readers) throws Exception {
		List<String> anomalies = new CopyOnWriteArrayList<>();
		for (int k = 0; k < KEYS; k++) {
			target.write(k, version(k, 0));
		}
		CountDownLatch start = new CountDownLatch(1);
		// Threads of their own (the common pool may have one thread on two cores).
		ExecutorService threads = Executors.newFixedThreadPool(3 + readers);
		try {
			return race(target, writes, readers, start, threads, anomalies);
		}
		finally {
			threads.shutdownNow();
			threads.awaitTermination(60, TimeUnit.SECONDS);
		}
	}

	private static List<String> race(Target target, int writes, int readers, CountDownLatch start,
			ExecutorService threads, List<String> anomalies) throws Exception {
		List<CompletableFuture<Void>> writers = new ArrayList<>();
		for (int w = 0; w < 2; w++) {
			int parity = w;
			writers.add(CompletableFuture.runAsync(() -> {
				await(start);
				for (int i = 1; i <= writes; i++) {
					int k = i % KEYS;
					target.write(k, version(k, 2L * i + parity));
				}
			}, threads));
		}
		CompletableFuture<Void> written = CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new));
		CompletableFuture<Void> beside = CompletableFuture.runAsync(() -> {
			await(start);
			while (!written.isDone() && anomalies.isEmpty()) {
				target.alongside();
			}
		}, threads);
		List<CompletableFuture<Void>> reading = new ArrayList<>();
		for (int r = 0; r < readers; r++) {
			reading.add(CompletableFuture.runAsync(() -> {
				await(start);
				long[] last = new long[KEYS];
				for (long n = 0; (!written.isDone() || n < 100) && anomalies.isEmpty(); n++) {
					int k = (int) (n % KEYS);
					Entry e = target.read(k);
					if (e == null || !wellFormed(k, e)) {
						anomalies.add("key " + k + ": torn or unknown read " + e);
					}
					else if (e.timestamp() < last[k]) {
						anomalies.add("key " + k + ": went back from " + last[k] + " to " + e.timestamp());
					}
					else {
						last[k] = e.timestamp();
					}
				}
			}, threads));
		}
		start.countDown();
		written.get(60, TimeUnit.SECONDS);
		beside.get(60, TimeUnit.SECONDS);
		for (CompletableFuture<Void> r : reading) {
			r.get(60, TimeUnit.SECONDS);
		}
		for (int k = 0; k < KEYS; k++) {
			int lastI = writes - Math.floorMod(writes - k, KEYS);
			Entry expected = version(k, 2L * lastI + 1);
			if (!expected.equals(target.read(k))) {
				anomalies.add("key " + k + ": kept " + target.read(k) + ", greatest written " + expected);
			}
		}
		return anomalies;
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await(60, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
