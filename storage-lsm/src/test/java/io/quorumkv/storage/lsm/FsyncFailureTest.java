package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.lsm.io.Fault;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * fsyncgate (PostgreSQL, 2018): after a failed {@code fsync} Linux may have dropped the
 * file's unsynced pages and reports the next {@code fsync} a success ({@link FaultFileIo}
 * models it). The engine must take the first failed {@code fsync} as fatal until a
 * restart: refuse writes with an error naming the cause, never report a later
 * {@code flush()} (or forced flush) a success, keep serving reads, and recover from what
 * is on disk.
 *
 * <p>
 * Enumerated, not sampled: one fixed single-writer workload (puts, overwrites, deletes,
 * batches, {@code flush()}, forced memtable flushes, full compactions) runs once to count
 * its {@code fsync}s (of WAL segments, tables and the manifest; or, second kind, of the
 * folder); then, for each i, it runs again with the i-th failing. Every operation after
 * the failure must fail, naming it; reads of the live store must still answer; and the
 * crash image (power loss at the end of the workload, or a restart after close) must
 * reopen with every write the fsync policy promised durable: with {@code ALWAYS} every
 * acknowledged write, with {@code NEVER} every write acknowledged before a
 * {@code flush()} or forced flush that succeeded.
 */
class FsyncFailureTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final int KEYS = 12;

	private static final int OPERATIONS = 60;

	/** The workload's seed: fixed, so that every run issues the same operations. */
	private static final long WORKLOAD = 52;

	@TempDir
	Path root;

	/**
	 * @param end {@code crash}: the power goes at the end of the workload (unsynced bytes
	 * dropped); {@code restart}: the store is closed, then reopened after the page cache
	 * lost what the failed fsync dropped
	 */
	@ParameterizedTest(name = "{0} fails, {1}, {2}")
	@CsvSource({ "SYNC, ALWAYS, crash", "SYNC, ALWAYS, restart", "SYNC, NEVER, crash", "SYNC, NEVER, restart",
			"SYNC_DIRECTORY, ALWAYS, crash", "SYNC_DIRECTORY, NEVER, restart" })
	void aFailedFsyncAtEverySyncPointLosesNothingPromisedAndRefusesWhatFollows(Op sync, FsyncPolicy policy, String end)
			throws Exception {
		Run counting = run(sync, policy, end, 0);
		assertThat(counting.anomalies).as("the workload without a fault").isEmpty();
		long syncs = counting.syncs;
		assertThat(syncs).as("fsyncs in the workload").isGreaterThan(10);
		List<String> anomalies = new ArrayList<>();
		int failedAt = 0;
		for (int i = 1; i <= syncs; i++) {
			Run run = run(sync, policy, end, i);
			if (run.failedAt >= 0) {
				failedAt++;
			}
			for (String anomaly : run.anomalies) {
				anomalies.add("fsync #" + i + " (" + run.faulted + "): " + anomaly);
			}
		}
		System.out.printf("[fsyncgate] %s, %s, %s: %d fsyncs, each failed in turn; %d runs saw the failure%n", sync,
				policy, end, syncs, failedAt);
		assertThat(anomalies).isEmpty();
	}

	/** One run of the workload, the {@code nth} {@code sync} failing (none for 0). */
	private Run run(Op sync, FsyncPolicy policy, String end, int nth) throws Exception {
		Path base = this.root.resolve(sync + "-" + policy + "-" + end + "-" + nth);
		Path dir = base.resolve("live");
		String[] faulted = { "none" };
		long[] syncs = { 0 };
		FaultFileIo io = new FaultFileIo(dir, nth).onEachOperation((op, path) -> {
			if (op == sync && ++syncs[0] == nth) {
				faulted[0] = path.getFileName().toString();
			}
		});
		if (nth > 0) {
			io.inject(Fault.at(sync, ".*", nth).fail());
		}
		Run run = new Run();
		CrashModel model = new CrashModel();
		LsmStorage storage;
		try {
			storage = LsmStorage.open(options(dir, policy), io);
		}
		catch (StorageException ex) {
			// The fault met the opening itself: nothing was written.
			run.faulted = faulted[0];
			run.syncs = syncs[0];
			return run;
		}
		Path image = base.resolve("image");
		try {
			workload(storage, io, model, run);
			check(storage, model, model::isAcked, "read from the live store after the workload", run);
			if ("crash".equals(end)) {
				io.powerLoss(Tear.DROP_UNSYNCED, image);
			}
		}
		finally {
			storage.close();
		}
		run.syncs = syncs[0];
		run.faulted = faulted[0];
		if ("restart".equals(end)) {
			io.powerLoss(Tear.KEEP_WRITTEN, image);
		}
		Predicate<CrashModel.Write> required = (policy == FsyncPolicy.ALWAYS) ? model::isAcked : (w) -> false;
		try (LsmStorage reopened = LsmStorage.open(options(image, policy))) {
			check(reopened, model, required, "after reopening the crash image", run);
			if (!reopened.stats().healthy()) {
				run.anomalies.add("the reopened store is not healthy: " + reopened.stats().failure());
			}
		}
		catch (RuntimeException ex) {
			Throwable cause = ex;
			while (cause.getCause() != null) {
				cause = cause.getCause();
			}
			run.anomalies.add("the crash image did not reopen: " + ex + ", caused by " + cause);
		}
		return run;
	}

	/**
	 * The workload: the same operations every run (a fixed seed). Every operation is
	 * tried also after a failure, which must refuse it.
	 */
	private static void workload(LsmStorage storage, FaultFileIo io, CrashModel model, Run run) {
		Random random = new Random(WORKLOAD);
		for (int i = 0; i < OPERATIONS; i++) {
			int r = random.nextInt(100);
			boolean afterFailure = io.injected() > 0;
			String what;
			boolean ok;
			if (r < 50) {
				what = "put";
				ok = write(storage, model, List.of(put(random, model.tick())), run);
			}
			else if (r < 60) {
				what = "delete";
				ok = write(storage, model, List.of(Entry.tombstone(key(random.nextInt(KEYS)), model.tick())), run);
			}
			else if (r < 70) {
				what = "batch";
				ok = write(storage, model, List.of(put(random, model.tick()), put(random, model.tick()),
						Entry.tombstone(key(random.nextInt(KEYS)), model.tick())), run);
			}
			else if (r < 82) {
				what = "flush()";
				ok = call(() -> storage.flush().block(TIMEOUT), run);
				if (ok) {
					model.durable();
				}
			}
			else if (r < 94) {
				what = "forced memtable flush";
				ok = call(() -> join(storage.forceFlush()), run);
				if (ok) {
					model.durable();
				}
			}
			else {
				what = "full compaction";
				ok = call(() -> join(storage.forceCompaction()), run);
			}
			if (ok && afterFailure) {
				run.anomalies.add("operation " + i + " (" + what + ") succeeded after the failed fsync");
			}
			if (!ok && afterFailure && !String.valueOf(run.refusal).contains("injected")) {
				run.anomalies
					.add("operation " + i + " (" + what + ") refused without naming the cause: " + run.refusal);
			}
			if (!ok && run.failedAt < 0) {
				run.failedAt = i;
			}
		}
	}

	private static boolean write(LsmStorage storage, CrashModel model, List<Entry> entries, Run run) {
		long batch = model.issue(entries);
		try {
			if (entries.size() == 1) {
				storage.upsert(entries.get(0)).block(TIMEOUT);
			}
			else {
				storage.upsertAll(entries).block(TIMEOUT);
			}
			model.acked(batch, System.nanoTime());
			return true;
		}
		catch (StorageException ex) {
			run.refusal = ex;
			return false;
		}
	}

	/** Runs {@code action}; false when it failed, which must be a storage failure. */
	private static boolean call(Runnable action, Run run) {
		try {
			action.run();
			return true;
		}
		catch (StorageException ex) {
			run.refusal = ex;
			return false;
		}
		catch (RuntimeException ex) {
			run.refusal = ex.getCause();
			if (!(ex.getCause() instanceof ExecutionException failed
					&& failed.getCause() instanceof StorageException)) {
				run.anomalies.add("failed with other than a storage failure: " + ex);
			}
			return false;
		}
	}

	private static void check(LsmStorage storage, CrashModel model, Predicate<CrashModel.Write> required, String when,
			Run run) {
		Map<byte[], Entry> found = new TreeMap<>(Keys.ORDER);
		for (Entry e : storage.scan(new byte[] { 0 }, null).collectList().block(TIMEOUT)) {
			found.put(e.key(), e);
		}
		for (String anomaly : model.checkAll(found, required)) {
			run.anomalies.add(when + ": " + anomaly);
		}
	}

	private static LsmOptions options(Path dir, FsyncPolicy policy) {
		// No memtable fills up and no compaction starts by itself: every fsync happens
		// inside an operation of the workload, in the same order every run.
		return LsmOptions.defaults(dir)
			.withMemtableSize(1 << 20)
			.withBlockSize(256)
			.withCompaction(64, 1 << 20, 4, 1 << 20)
			.withFsync(policy);
	}

	private static Entry put(Random random, long timestamp) {
		byte[] value = new byte[1 + random.nextInt(60)];
		random.nextBytes(value);
		return Entry.value(key(random.nextInt(KEYS)), value, timestamp);
	}

	private static byte[] key(int i) {
		return String.format("key-%02d", i).getBytes(StandardCharsets.UTF_8);
	}

	private static void join(CompletableFuture<Void> future) {
		try {
			future.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** What one run found. */
	private static final class Run {

		final List<String> anomalies = new ArrayList<>();

		long syncs;

		String faulted = "none";

		/** The first operation that failed, or -1. */
		int failedAt = -1;

		/** The last operation's failure. */
		@Nullable Throwable refusal;

	}

}
