package io.quorumkv.storage.lsm;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.BrokenIo;
import io.quorumkv.storage.lsm.io.FileIo;

/**
 * The process of {@link LsmStressTest}, killed with SIGKILL at random by it. On start it
 * reopens the store and checks every key against the {@link ExpectedState} file (its
 * committed version, or the one in flight when the last process died); then runs
 * {@link StressWorker}s and a thread of flushes, {@code flush()} calls and full
 * compactions until killed or its time is up. Prints {@code verified <keys>},
 * {@code ops <count>} every half second, and {@code anomaly <what>} for each anomaly;
 * exits 3 after an anomaly.
 *
 * <p>
 * Arguments: data folder, expected-state file, keys, threads, seed, seconds (0: check
 * only), fsync policy, defect ({@code none}, {@code buffered-wal}: the WAL buffered in
 * the process, {@code drops-writes}: every 500th write acknowledged but not applied).
 */
public final class StressChild {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	/**
	 * The buffering engine's memtable: larger than every key at its longest value, so it
	 * never fills and its WAL segment is never closed. With small memtables a kill could
	 * land while the writers wait for a level-0 compaction: the full memtable was frozen
	 * and flushed (its segment closed, so written out) and the new segment is still
	 * empty, so nothing was lost and the check had nothing to catch (seen once in CI).
	 */
	private static final int BUFFERING_MEMTABLE = 16 << 20;

	private StressChild() {
	}

	/**
	 * Small memtables, so that flushes and compactions run all the time; the buffering
	 * engine's memtable never fills instead (see {@link #BUFFERING_MEMTABLE}).
	 */
	static LsmOptions options(Path dir, FsyncPolicy policy, boolean buffering) {
		return LsmOptions.defaults(dir)
			.withMemtableSize(buffering ? BUFFERING_MEMTABLE : 64 << 10)
			.withCompaction(3, 256 << 10, 4, 64 << 10)
			.withFsync(policy)
			.withFsyncInterval(Duration.ofMillis(20));
	}

	public static void main(String[] args) throws Exception {
		Path dir = Path.of(args[0]);
		int keys = Integer.parseInt(args[2]);
		int threads = Integer.parseInt(args[3]);
		long seed = Long.parseLong(args[4]);
		int seconds = Integer.parseInt(args[5]);
		FsyncPolicy policy = FsyncPolicy.valueOf(args[6]);
		String defect = args[7];
		PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
		AtomicInteger anomalies = new AtomicInteger();
		java.util.function.Consumer<String> report = (what) -> {
			if (anomalies.incrementAndGet() <= 50) {
				out.println("anomaly " + what);
			}
		};
		boolean buffering = "buffered-wal".equals(defect);
		FileIo io = buffering ? BrokenIo.bufferWritesOf("wal-.*").apply(FileIo.real()) : FileIo.real();
		try (ExpectedState expected = new ExpectedState(Path.of(args[1]), keys);
				LsmStorage storage = LsmStorage.open(options(dir, policy, buffering), io)) {
			verify(storage, expected, report);
			out.println("verified " + keys);
			if (seconds > 0 && anomalies.get() == 0) {
				run(storage, expected, threads, seed, seconds, defect, report, () -> anomalies.get() > 0, out);
			}
		}
		out.println("done " + anomalies.get());
		System.exit((anomalies.get() > 0) ? 3 : 0);
	}

	/** Every key must hold its committed version or the one in flight at the crash. */
	static void verify(LsmStorage storage, ExpectedState expected, java.util.function.Consumer<String> report) {
		List<Entry> all = storage.scan(ExpectedState.key(0), null).collectList().block(TIMEOUT);
		int next = 0;
		for (Entry e : all) {
			int k = ExpectedState.keyNumber(e.key());
			Entry got = storage.get(e.key()).block(TIMEOUT);
			if (!e.equals(got)) {
				report.accept("key " + k + ": scan read " + e + ", get " + got);
			}
			for (; next < k; next++) {
				settle(expected, next, null, report);
			}
			settle(expected, k, e, report);
			next = k + 1;
		}
		for (; next < expected.keys(); next++) {
			settle(expected, next, storage.get(ExpectedState.key(next)).block(TIMEOUT), report);
		}
	}

	private static void settle(ExpectedState expected, int k, Entry found, java.util.function.Consumer<String> report) {
		long committed = expected.committed(k);
		long pending = expected.pending(k);
		if (!expected.settle(k, found)) {
			report.accept("key " + k + " after restart: " + found + ", acknowledged "
					+ ((committed == 0) ? "nothing" : ExpectedState.entry(k, committed)) + ", in flight "
					+ ((pending == 0) ? "nothing" : ExpectedState.entry(k, pending)));
		}
	}

	/** Runs the workers until {@code seconds} passed or an anomaly was reported. */
	private static void run(LsmStorage storage, ExpectedState expected, int threads, long seed, int seconds,
			String defect, java.util.function.Consumer<String> report, java.util.function.BooleanSupplier anomalous,
			PrintStream out) throws Exception {
		AtomicBoolean stop = new AtomicBoolean();
		AtomicLong operations = new AtomicLong();
		List<Thread> workers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			workers.add(Thread.ofPlatform()
				.name("stress-" + t)
				.start(new StressWorker(storage, expected, t, threads, seed + t, stop, operations, report,
						"drops-writes".equals(defect))));
		}
		if (!"buffered-wal".equals(defect)) {
			// (A buffering engine's flush() would empty its buffer: left out, so that the
			// kill finds acknowledged writes in it.)
			workers.add(Thread.ofPlatform().name("stress-chaos").start(() -> chaos(storage, seed, stop, report)));
		}
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
		while (System.nanoTime() < deadline && !anomalous.getAsBoolean()) {
			Thread.sleep(500);
			out.println("ops " + operations.get());
		}
		stop.set(true);
		for (Thread worker : workers) {
			worker.join(TIMEOUT.toMillis());
		}
		out.println("ops " + operations.get());
	}

	/** Flushes, {@code flush()} calls and full compactions at random moments. */
	private static void chaos(LsmStorage storage, long seed, AtomicBoolean stop,
			java.util.function.Consumer<String> report) {
		SplittableRandom random = new SplittableRandom(seed ^ 0x5DEECE66DL);
		try {
			while (!stop.get()) {
				Thread.sleep(50 + random.nextInt(400));
				int r = random.nextInt(10);
				if (r < 3) {
					storage.forceFlush().get(60, TimeUnit.SECONDS);
				}
				else if (r < 5) {
					storage.forceCompaction().get(60, TimeUnit.SECONDS);
				}
				else {
					storage.flush().block(TIMEOUT);
				}
			}
		}
		catch (Exception ex) {
			report.accept("flush or compaction failed: " + ex);
		}
	}

}
