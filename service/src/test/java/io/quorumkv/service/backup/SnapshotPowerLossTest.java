package io.quorumkv.service.backup;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.support.FileTrees;
import io.quorumkv.service.support.RisingClock;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.FsyncPolicy;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import io.quorumkv.storage.lsm.io.Fault;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.PurgePolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The power cut at every file operation of a snapshot (docs/backup.md, "Crashes during a
 * snapshot"): a node's whole storage path (its LSM data folder and its snapshots) is on a
 * {@link FaultFileIo#tree fault-injecting layer} that models what a power cut keeps
 * (forced bytes, names as of their folder's last sync, a prefix of the later name
 * changes). One fixed run writes keys, takes snapshot {@code s0}, overwrites them, holds
 * and takes {@code s1}: once to count the operations of {@code s1}, then once per
 * operation with the power cut there, each way in turn (what was not forced dropped, or
 * everything kept: a process crash). Each image then starts as a node starts: the store
 * opens with every write it acknowledged (the WAL is forced at each), the start removes a
 * half-made snapshot, {@code s0} verifies and restores to the keys' first values, and
 * {@code s1} is either absent or whole: it verifies and restores to the overwrites.
 */
class SnapshotPowerLossTest {

	private static final Node SELF = Node.of("node1", "http://127.0.0.1:1");

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final int KEYS = 40;

	private static final List<Tear> TEARS = List.of(Tear.DROP_UNSYNCED, Tear.KEEP_WRITTEN);

	@TempDir
	Path dir;

	@Test
	void aPowerCutAtAnyOperationOfASnapshotLeavesTheStoreAndEarlierSnapshotsWholeAndNoHalfSnapshot() throws Exception {
		Path counted = this.dir.resolve("count");
		FaultFileIo layer = FaultFileIo.tree(counted, 0);
		Run whole = new Run(layer, counted);
		whole.all();
		assertThat(whole.s1Error).as("the run without a cut").isNull();
		List<String> clean = check(counted, whole, "the run without a cut");
		assertThat(clean).isEmpty();
		long first = whole.opsBeforeS1 + 1;
		long last = whole.opsAfterS1;
		assertThat(last - first).as("file operations of s1").isGreaterThan(10);
		List<String> anomalies = new ArrayList<>();
		int cuts = 0;
		for (long k = first; k <= last && anomalies.size() < 10; k++) {
			Tear tear = TEARS.get((int) (k % TEARS.size()));
			Path folder = this.dir.resolve("run-" + k);
			Path image = this.dir.resolve("image-" + k);
			FaultFileIo cut = FaultFileIo.tree(folder, k);
			cut.inject(Fault.atOperation(k).powerLoss(tear, image));
			Run run = new Run(cut, folder);
			run.all();
			String where = "cut at operation " + k + " of " + first + ".." + last + " (" + cut.fired() + ", " + tear
					+ ")";
			if (cut.image() == null) {
				anomalies.add(where + ": the power cut never came");
				continue;
			}
			cuts++;
			List<String> found = check(image, run, where);
			anomalies.addAll(found);
			if (found.isEmpty()) {
				SnapshotFiles.deleteTree(folder);
				SnapshotFiles.deleteTree(image);
			}
		}
		System.out.println("SnapshotPowerLossTest: " + cuts + " cuts in the " + (last - first + 1)
				+ " file operations of a snapshot");
		assertThat(anomalies).isEmpty();
	}

	/**
	 * Starts the node's storage from {@code path} as a node does (real file I/O) and
	 * checks it against what {@code run} acknowledged.
	 */
	private List<String> check(Path path, Run run, String where) throws IOException {
		List<String> anomalies = new ArrayList<>();
		Map<String, String> stored = new TreeMap<>();
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(path.resolve("data")), FileIo.real(),
				java.time.Clock.systemUTC(), PurgePolicy.KEEP_ALL)) {
			storage.scan(new byte[0], null)
				.toIterable()
				.forEach((e) -> stored.put(text(e.key()), (e.value() != null) ? text(e.value()) : null));
			NodeSnapshots snapshots = new NodeSnapshots(path.resolve(NodeSnapshots.FOLDER), storage, "lsm", SELF,
					() -> null);
			try (Stream<Path> left = Files.list(path.resolve(NodeSnapshots.FOLDER))) {
				List<String> partial = left.map((p) -> p.getFileName().toString())
					.filter((name) -> name.endsWith(NodeSnapshots.PARTIAL_SUFFIX))
					.toList();
				if (!partial.isEmpty()) {
					anomalies.add(where + ": half-made snapshots left after the start: " + partial);
				}
			}
		}
		// The write the cut failed may be in the store or not.
		Map<String, String> inFlight = new TreeMap<>(run.acknowledged);
		if (run.failedKey != null) {
			inFlight.put(run.failedKey, run.failedValue);
		}
		if (!stored.equals(run.acknowledged) && !stored.equals(inFlight)) {
			anomalies.add(where + ": the store holds " + stored + ", acknowledged " + run.acknowledged);
		}
		anomalies.addAll(snapshot(path, "s0", run.t0, run.asOfS0, where, true));
		anomalies.addAll(snapshot(path, "s1", run.t1, run.asOfS1, where, run.s1Error == null));
		return anomalies;
	}

	/** Snapshot {@code name} verifies and restores to {@code expected}, or is absent. */
	private List<String> snapshot(Path path, String name, long time, Map<String, String> expected, String where,
			boolean mustExist) {
		Path folder = path.resolve(NodeSnapshots.FOLDER).resolve(name);
		if (!Files.exists(folder)) {
			return mustExist ? List.of(where + ": snapshot " + name + ", taken, is missing") : List.of();
		}
		try {
			SnapshotVerifier.verify(folder);
			Path set = this.dir.resolve("set-" + name + "-" + System.nanoTime());
			FileTrees.copy(folder, set.resolve("node1"));
			Map<String, String> restored = new TreeMap<>();
			Restore.entries(Restore.check(set, time), new AtomicLong(), new AtomicLong())
				.doOnNext((e) -> restored.put(text(e.key()), text(e.value())))
				.blockLast(WAIT);
			SnapshotFiles.deleteTree(set);
			return restored.equals(expected) ? List.of()
					: List.of(where + ": snapshot " + name + " restores to " + restored + ", not " + expected);
		}
		catch (RuntimeException ex) {
			return List.of(where + ": snapshot " + name + " is there but not whole: " + ex);
		}
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/** The fixed run; it stops at the power cut (every later operation fails). */
	private static final class Run {

		private final FaultFileIo layer;

		private final Path path;

		private final RisingClock clock = new RisingClock();

		final Map<String, String> acknowledged = new TreeMap<>();

		final Map<String, String> asOfS0 = new TreeMap<>();

		final Map<String, String> asOfS1 = new TreeMap<>();

		long t0;

		long t1;

		long opsBeforeS1;

		long opsAfterS1;

		Throwable s1Error;

		String failedKey;

		String failedValue;

		Run(FaultFileIo layer, Path path) {
			this.layer = layer;
			this.path = path;
		}

		void all() {
			LsmStorage storage = LsmStorage.open(
					LsmOptions.defaults(this.path.resolve("data")).withFsync(FsyncPolicy.ALWAYS), this.layer,
					java.time.Clock.systemUTC(), PurgePolicy.KEEP_ALL);
			try {
				NodeSnapshots snapshots = new NodeSnapshots(this.path.resolve(NodeSnapshots.FOLDER), storage, "lsm",
						SELF, () -> null, this.layer);
				if (!writeAll(storage, "first")) {
					return;
				}
				this.asOfS0.putAll(this.acknowledged);
				this.t0 = this.clock.next();
				snapshots.take("s0", this.t0).block(WAIT);
				if (!writeAll(storage, "second")) {
					return;
				}
				this.asOfS1.putAll(this.acknowledged);
				this.opsBeforeS1 = operations();
				try {
					snapshots.hold("s1").block(WAIT);
					this.t1 = this.clock.next();
					// Overwritten between the hold and the snapshot: s1 keeps "second".
					writeAll(storage, "third");
					snapshots.take("s1", this.t1).block(WAIT);
				}
				catch (RuntimeException ex) {
					this.s1Error = ex;
				}
				this.opsAfterS1 = operations();
			}
			catch (RuntimeException ex) {
				if (!this.layer.isDead()) {
					throw ex;
				}
			}
			finally {
				try {
					storage.close();
				}
				catch (RuntimeException ex) {
					// The disk is gone.
				}
			}
		}

		private long operations() {
			long all = 0;
			for (Op op : Op.values()) {
				all += this.layer.calls(op);
			}
			return all;
		}

		/** Writes every key; false once a write failed (the power cut). */
		private boolean writeAll(LsmStorage storage, String value) {
			for (int i = 0; i < KEYS; i++) {
				String key = "k" + i;
				try {
					storage.upsert(Entry.value(bytes(key), bytes(value + i), this.clock.next())).block(WAIT);
				}
				catch (RuntimeException ex) {
					this.failedKey = key;
					this.failedValue = value + i;
					return false;
				}
				this.acknowledged.put(key, value + i);
			}
			return true;
		}

	}

}
