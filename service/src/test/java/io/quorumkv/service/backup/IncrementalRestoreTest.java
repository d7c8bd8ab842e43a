package io.quorumkv.service.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.support.FileTrees;
import io.quorumkv.service.support.RisingClock;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.IncrementalBackup;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot plus the incremental tables flushed since restores to a later time: with
 * writes, overwrites and deletes after the snapshot, flushes and a compaction, the merge
 * a restore writes equals a ledger's state as of a time after the snapshot, and as of the
 * last flush; a time past the chain's reach is refused naming it; a byte flipped in an
 * incremental table fails verification naming the file; a missing table stops the chain;
 * the tables a snapshot holds are pruned, and the rest still restore.
 */
@ExtendWith(Seeds.class)
class IncrementalRestoreTest {

	private static final Node SELF = Node.of("node1", "http://127.0.0.1:1");

	private static final Duration WAIT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	/**
	 * The time of the last write: a reading of the clock the store freezes its memtables
	 * by, each later than the one before (as a node's hybrid logical clock stamps them).
	 */
	private final RisingClock clock = new RisingClock();

	@Test
	void aSnapshotPlusItsIncrementalTablesRestoresALaterTime(Seeds.Seed given) throws IOException {
		long seed = given.value();
		System.out.println("IncrementalRestoreTest: " + Seeds.rerun(seed));
		Random random = new Random(seed);
		TreeMap<String, Entry> ledger = new TreeMap<>();
		Path data = this.dir.resolve("data");
		Path set = this.dir.resolve("set");
		Map<String, Entry> atT;
		long t;
		long end;
		NodeSnapshots snapshots;
		// 16 KiB memtables: the writes after the snapshot fill several, flushed on their
		// own, beside the flushes of the compactions asked for.
		try (LsmStorage storage = LsmStorage
			.open(LsmOptions.defaults(data).withMemtableSize(16 << 10).withIncrementalBackups(true))) {
			write(storage, ledger, random, 400, 400);
			snapshots = new NodeSnapshots(this.dir.resolve("snapshots"), storage, "lsm", SELF, () -> null);
			SnapshotManifest manifest = snapshots.take("s1", this.clock.next()).block(WAIT);
			write(storage, ledger, random, 1_500, 500);
			storage.compact().block(WAIT);
			t = this.clock.last();
			atT = new TreeMap<>(ledger);
			write(storage, ledger, random, 1_500, 600);
			// The last writes are flushed by the close, and linked then too.
			end = this.clock.last();
			assertThat(manifest.asOf()).isLessThan(t);
		}
		// The tables the snapshot holds are pruned; those flushed after it are kept.
		NodeSnapshots.ClearedBackups cleared = snapshots.clearBackups("s1").block(WAIT);
		assertThat(cleared.removed()).isPositive();
		assertThat(IncrementalBackup.list(data.resolve(IncrementalBackup.FOLDER))).hasSize(cleared.kept())
			.allMatch((record) -> record.number() > cleared.base());
		FileTrees.copy(this.dir.resolve("snapshots/s1"), set.resolve("node1"));
		FileTrees.copy(data.resolve(IncrementalBackup.FOLDER), set.resolve("node1").resolve(Incrementals.FOLDER));

		assertThat(restored(set, t)).isEqualTo(atT);
		assertThat(restored(set, end)).isEqualTo(ledger);

		// A link the node was making when the copy was taken is no table yet.
		Files.writeString(set.resolve("node1/incremental/999999.sst.tmp"), "half a copy");
		SnapshotVerifier.Report report = SnapshotVerifier.verify(set.resolve("node1"));
		assertThat(report.incrementalTables()).isGreaterThan(2);
		assertThat(report.reach()).isGreaterThanOrEqualTo(end);
		assertThat(report.gap()).isNull();
		assertThat(report.keys()).isEqualTo(ledger.size());
		assertThatThrownBy(() -> Restore.check(set, report.reach() + 1)).isInstanceOf(SnapshotException.class)
			.hasMessageContaining("it can restore up to " + report.reach());

		// A table lost from the middle of the chain: the set reaches its predecessor.
		List<IncrementalBackup> records = IncrementalBackup.list(set.resolve("node1/incremental"));
		IncrementalBackup lost = records.get(records.size() / 2);
		IncrementalBackup before = records.get(records.size() / 2 - 1);
		Path gapSet = this.dir.resolve("gap");
		FileTrees.copy(set, gapSet);
		Files.delete(gapSet.resolve("node1/incremental").resolve(lost.table()));
		Files.delete(gapSet.resolve("node1/incremental").resolve(lost.recordFile()));
		SnapshotVerifier.Report gap = SnapshotVerifier.verify(gapSet.resolve("node1"));
		assertThat(gap.reach()).isEqualTo(Math.max(before.frozenAt(), report.manifest().asOf()));
		assertThat(gap.gap()).contains("number " + lost.number());
		assertThatThrownBy(() -> Restore.check(gapSet, end)).isInstanceOf(SnapshotException.class)
			.hasMessageContaining("number " + lost.number());

		// One byte flipped in an incremental table.
		Path damaged = set.resolve("node1/incremental").resolve(records.getLast().table());
		byte[] bytes = Files.readAllBytes(damaged);
		bytes[bytes.length / 2] ^= 0x01;
		Files.write(damaged, bytes);
		assertThatThrownBy(() -> SnapshotVerifier.verify(set.resolve("node1"))).isInstanceOf(SnapshotException.class)
			.hasMessageContaining(damaged.toString())
			.hasMessageContaining("damaged");
		assertThatThrownBy(() -> Restore.check(set, t)).isInstanceOf(SnapshotException.class)
			.hasMessageContaining(damaged.toString());
	}

	@Test
	void withoutIncrementalTablesALaterTimeIsRefused() throws IOException {
		Path data = this.dir.resolve("data");
		Path set = this.dir.resolve("set");
		long asOf;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withIncrementalBackups(true))) {
			write(storage, new TreeMap<>(), new Random(1), 50, 50);
			NodeSnapshots snapshots = new NodeSnapshots(this.dir.resolve("snapshots"), storage, "lsm", SELF,
					() -> null);
			asOf = snapshots.take("s1", this.clock.next()).block(WAIT).asOf();
		}
		FileTrees.copy(this.dir.resolve("snapshots/s1"), set.resolve("node1"));
		assertThatThrownBy(() -> Restore.check(set, asOf + 1)).isInstanceOf(SnapshotException.class)
			.hasMessageContaining("is after the snapshot's time " + asOf);
	}

	/**
	 * A node that crashes after {@code clear-backups}, before its next flush, continues
	 * its chain from its newest record: the first table it flushes once started again
	 * names the snapshot's base as the one before, and the set restores up to it. (While
	 * {@code clear-backups} removed every table up to the base, the node started a new
	 * chain, and the set reached no further than the snapshot.)
	 */
	@Test
	void aNodeCrashedAfterClearBackupsContinuesTheChainFromTheSnapshot() throws IOException {
		Path data = this.dir.resolve("data");
		Path crashed = this.dir.resolve("crashed");
		Path set = this.dir.resolve("set");
		TreeMap<String, Entry> ledger = new TreeMap<>();
		Random random = new Random(2);
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withIncrementalBackups(true))) {
			write(storage, ledger, random, 100, 50);
			NodeSnapshots snapshots = new NodeSnapshots(this.dir.resolve("snapshots"), storage, "lsm", SELF,
					() -> null);
			snapshots.take("s1", this.clock.next()).block(WAIT);
			// The snapshot's table leaves level 0: only the records tell what was
			// flushed.
			storage.compact().block(WAIT);
			snapshots.clearBackups("s1").block(WAIT);
			// A process crash: the files as they are, with the store still open.
			FileTrees.copy(data, crashed);
		}
		long end;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(crashed).withIncrementalBackups(true))) {
			write(storage, ledger, random, 100, 50);
			end = this.clock.last();
		}
		FileTrees.copy(this.dir.resolve("snapshots/s1"), set.resolve("node1"));
		FileTrees.copy(crashed.resolve(IncrementalBackup.FOLDER), set.resolve("node1").resolve(Incrementals.FOLDER));
		SnapshotVerifier.Report report = SnapshotVerifier.verify(set.resolve("node1"));
		assertThat(report.gap()).isNull();
		assertThat(report.reach()).isGreaterThanOrEqualTo(end);
		assertThat(restored(set, end)).isEqualTo(ledger);
	}

	/** The entries the restore of {@code set} as of {@code time} writes, by key. */
	private static Map<String, Entry> restored(Path set, long time) {
		TreeMap<String, Entry> restored = new TreeMap<>();
		Restore.entries(Restore.check(set, time), new AtomicLong(), new AtomicLong())
			.doOnNext((e) -> restored.put(new String(e.key(), StandardCharsets.UTF_8), e))
			.blockLast(WAIT);
		return restored;
	}

	/**
	 * {@code count} writes over keys {@code 0..keys}: a value, an overwrite, or (one in
	 * five) a delete, each at a later time, recorded in the ledger.
	 */
	private void write(LsmStorage storage, TreeMap<String, Entry> ledger, Random random, int count, int keys) {
		for (int i = 0; i < count; i++) {
			String key = String.format("key%05d", random.nextInt(keys));
			byte[] k = key.getBytes(StandardCharsets.UTF_8);
			long time = this.clock.next();
			Entry entry = (random.nextInt(5) == 0) ? Entry.tombstone(k, time)
					: Entry.value(k, ("v" + time + "-" + random.nextInt(1_000)).getBytes(StandardCharsets.UTF_8), time);
			storage.upsert(entry).block(WAIT);
			ledger.put(key, entry);
		}
	}

}
