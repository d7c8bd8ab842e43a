package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.io.Fault;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash points of flushes with incremental backups on, enumerated as
 * {@link CrashPointSweep} does: one fixed workload (writes, three forced flushes, more
 * writes, {@code close()}) runs once to count its file operations, then once per
 * operation with the power cut there, dropping what was not forced, and keeping all that
 * was written (a process crash). The second flush runs a full compaction in the window
 * between its table's link (under a temporary name) and its record, so that the
 * compaction drops the table the link holds. Each crash image is opened again with
 * incremental backups on, takes one write and is closed; then {@code backups/} must hold
 * a chain without a gap from the first flush on (each record names the one before as
 * {@code previous}, every table matches its record, no temporary file is left), and the
 * chain must hold what the store holds: for every key, the newest version in the chained
 * tables is the store's. Each operation is cut one way, the two ways in turn from one the
 * printed seed picks (so every operation is crashed, and every pair of operation and way
 * comes up over runs); {@code -Dquorumkv.storage.long=true} (the {@code storage-long}
 * profile) cuts every operation both ways.
 */
@ExtendWith(Seeds.class)
class IncrementalBackupCrashTest {

	private static final boolean LONG = Boolean.getBoolean("quorumkv.storage.long");

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final List<Tear> TEARS = List.of(Tear.DROP_UNSYNCED, Tear.KEEP_WRITTEN);

	@TempDir
	Path root;

	@Test
	void aCrashAtAnyFileOperationLeavesAChainWithoutAGapHoldingTheStore(Seeds.Seed seed) throws Exception {
		Path counted = this.root.resolve("count");
		FaultFileIo layer = new FaultFileIo(counted, 0);
		List<String> operations = Collections.synchronizedList(new ArrayList<>());
		Workload run = new Workload(layer, operations);
		run.all();
		assertThat(run.compactedInWindow)
			.as("the compaction dropped the second flush's table between its link and its record")
			.isTrue();
		assertThat(operations).as("the links are file operations of the sweep").anyMatch((op) -> op.startsWith("LINK"));
		assertThat(check(counted, "the run without a crash")).isEmpty();
		assertThat(IncrementalBackup.list(counted.resolve(IncrementalBackup.FOLDER))).hasSize(4);
		List<String> anomalies = new ArrayList<>();
		int first = (int) Math.floorMod(seed.value(), (long) TEARS.size());
		for (int k = 1; k <= operations.size() && anomalies.size() < 10; k++) {
			List<Tear> cuts = LONG ? TEARS : List.of(TEARS.get((first + k) % TEARS.size()));
			for (Tear tear : cuts) {
				anomalies.addAll(crashAt(k, tear, operations.get(k - 1)));
			}
		}
		assertThat(anomalies)
			.as("%d crash points, each with %s, %s", operations.size(), LONG ? TEARS : "one of " + TEARS,
					Seeds.rerun(seed.value()))
			.isEmpty();
	}

	private List<String> crashAt(long k, Tear tear, String operation) throws Exception {
		Path dir = this.root.resolve("run-" + k + "-" + tear);
		Path image = this.root.resolve("image-" + k + "-" + tear);
		FaultFileIo layer = new FaultFileIo(dir, k);
		layer.inject(Fault.atOperation(k).powerLoss(tear, image));
		new Workload(layer, new ArrayList<>()).all();
		String where = "crash at operation " + k + " (" + operation + ", " + tear + ", seed " + k + ")";
		if (layer.image() == null) {
			return List.of(where + ": the power loss never came");
		}
		try (LsmStorage reopened = LsmStorage.open(options(image, true))) {
			reopened.upsert(Entry.value(key(99), key(99), System.currentTimeMillis() * 1_000 + 1_000_000))
				.block(TIMEOUT);
		}
		catch (RuntimeException ex) {
			return List.of(where + ": the store did not open again: " + ex);
		}
		List<String> anomalies = check(image, where);
		if (anomalies.isEmpty()) {
			TestDirs.delete(dir);
			TestDirs.delete(image);
		}
		return anomalies;
	}

	/** The chain in {@code data}'s {@code backups/} against the store's content. */
	private static List<String> check(Path data, String where) throws IOException {
		List<String> anomalies = new ArrayList<>();
		Path backups = data.resolve(IncrementalBackup.FOLDER);
		List<IncrementalBackup> records = IncrementalBackup.list(backups);
		long previous = -1;
		long frozenAt = Long.MIN_VALUE;
		List<String> tables = new ArrayList<>();
		for (IncrementalBackup record : records) {
			if (record.previous() != previous) {
				anomalies.add(where + ": a gap: " + record.table() + " names " + record.previous()
						+ " as the table flushed before it, the chain's last is " + previous);
			}
			if (record.frozenAt() < frozenAt) {
				anomalies.add(where + ": " + record.table() + " was frozen before the table flushed before it");
			}
			Path table = backups.resolve(record.table());
			if (!Files.exists(table) || IncrementalBackup.crc32c(table) != record.crc32c()
					|| Files.size(table) != record.size()) {
				anomalies.add(where + ": " + table + " is missing or does not match its record");
			}
			else {
				tables.add(record.table());
			}
			previous = record.number();
			frozenAt = record.frozenAt();
		}
		try (Stream<Path> files = Files.list(backups)) {
			files.map((p) -> p.getFileName().toString())
				.filter((name) -> name.endsWith(".tmp"))
				.forEach((name) -> anomalies.add(where + ": a temporary file is left: " + name));
		}
		Map<String, Entry> chained = new TreeMap<>();
		try (LsmSnapshotReader reader = LsmSnapshotReader.openTables(backups, tables)) {
			for (Iterator<Entry> table : reader.tables()) {
				while (table.hasNext()) {
					Entry e = table.next();
					chained.merge(text(e.key()), e, (a, b) -> (EntryOrder.INSTANCE.compare(a, b) >= 0) ? a : b);
				}
			}
		}
		Map<String, Entry> stored = new TreeMap<>();
		try (LsmStorage storage = LsmStorage.open(options(data, false))) {
			for (Entry e : storage.scan(new byte[] { 0 }, null).collectList().block(TIMEOUT)) {
				stored.put(text(e.key()), e);
			}
		}
		chained.values().removeIf(Entry::isTombstone);
		stored.values().removeIf(Entry::isTombstone);
		if (!chained.equals(stored)) {
			anomalies.add(where + ": the chain holds " + chained.keySet() + ", the store " + stored.keySet()
					+ ((chained.keySet().equals(stored.keySet())) ? " (other versions)" : ""));
		}
		return anomalies;
	}

	private static LsmOptions options(Path dir, boolean incremental) {
		return CrashPointSweep.options(dir, FsyncPolicy.ALWAYS).withIncrementalBackups(incremental);
	}

	private static byte[] key(int k) {
		return String.format("key%03d", k).getBytes(StandardCharsets.US_ASCII);
	}

	private static String text(byte[] key) {
		return new String(key, StandardCharsets.US_ASCII);
	}

	/**
	 * The workload on a store over {@code layer}, up to its first failure (the power
	 * loss); its numbered operations (kind and name) are added to {@code operations}.
	 */
	private static final class Workload {

		private final FaultFileIo layer;

		private final AtomicBoolean compactInWindow = new AtomicBoolean();

		private final AtomicReference<LsmStorage> storage = new AtomicReference<>();

		/**
		 * Microseconds from now on, as a hybrid logical clock's: tombstones stay within
		 * the purge grace.
		 */
		private long time = System.currentTimeMillis() * 1_000;

		volatile boolean compactedInWindow;

		Workload(FaultFileIo layer, List<String> operations) {
			this.layer = layer;
			layer.onEachOperation((op, path) -> {
				Path dir = layer.dir();
				Path absolute = path.toAbsolutePath().normalize();
				operations.add(op + " " + (absolute.equals(dir) ? "the folder" : dir.relativize(absolute)));
				// The flush retires its WAL segment after its table's link is claimed and
				// before its record: a compaction here drops the table the link holds.
				if (op == Op.DELETE && path.getFileName().toString().startsWith("wal-")
						&& Thread.currentThread().getName().startsWith("lsm-flush")
						&& this.compactInWindow.getAndSet(false)) {
					this.compactedInWindow = attempt(() -> join(this.storage.get().forceCompaction()))
							&& claimedTableDropped(dir);
				}
			});
		}

		void all() {
			LsmStorage store;
			try {
				store = LsmStorage.open(options(this.layer.dir(), true), this.layer);
			}
			catch (RuntimeException ex) {
				return;
			}
			this.storage.set(store);
			try {
				// A forced flush of the empty memtable waits for the spare WAL segment.
				boolean done = attempt(() -> join(store.forceFlush())) && write(store, 0, 10, false)
						&& attempt(() -> join(store.forceFlush())) && write(store, 5, 15, false)
						&& write(store, 3, 4, true);
				if (done) {
					this.compactInWindow.set(true);
					done = attempt(() -> join(store.forceFlush())) && write(store, 15, 20, false)
							&& write(store, 12, 13, true) && attempt(() -> join(store.forceFlush()))
							&& write(store, 20, 25, false);
				}
			}
			finally {
				try {
					store.close();
				}
				catch (RuntimeException ex) {
					if (!this.layer.isDead()) {
						throw ex;
					}
				}
			}
		}

		/** Whether the table of a link not yet recorded is gone from the data folder. */
		private static boolean claimedTableDropped(Path dir) {
			try (Stream<Path> files = Files.list(dir.resolve(IncrementalBackup.FOLDER))) {
				List<String> claimed = files.map((p) -> p.getFileName().toString())
					.filter((name) -> name.endsWith(".sst.tmp"))
					.toList();
				return claimed.size() == 1
						&& !Files.exists(dir.resolve(claimed.getFirst().substring(0, claimed.getFirst().length() - 4)));
			}
			catch (IOException ex) {
				return false;
			}
		}

		private boolean write(LsmStorage store, int from, int to, boolean delete) {
			for (int k = from; k < to; k++) {
				long t = this.time++;
				Entry e = delete ? Entry.tombstone(key(k), t)
						: Entry.value(key(k), ("v" + t).getBytes(StandardCharsets.US_ASCII), t);
				if (!attempt(() -> store.upsert(e).block(TIMEOUT))) {
					return false;
				}
			}
			return true;
		}

		/** Runs a step; false once it failed (the power is gone). */
		private boolean attempt(Runnable step) {
			if (this.layer.isDead()) {
				return false;
			}
			try {
				step.run();
				return !this.layer.isDead();
			}
			catch (RuntimeException ex) {
				if (!this.layer.isDead()) {
					throw ex;
				}
				return false;
			}
		}

		private static void join(CompletableFuture<?> future) {
			try {
				future.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
