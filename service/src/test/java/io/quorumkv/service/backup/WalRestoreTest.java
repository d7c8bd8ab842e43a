package io.quorumkv.service.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
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
import io.quorumkv.storage.lsm.WalBackup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The WAL segments linked with the incremental tables make a restore exact at a time
 * between two flushes: keys written before a flush (v1), overwritten or deleted after it
 * (v2) and overwritten again (v3) in the same memtable restore, as of a time between v2
 * and v3, to their v2 state exactly (the table of that memtable holds v3 only), keys
 * first written after the time are absent, and deletes before it stay deletes. A byte
 * flipped in the middle of a linked segment fails verification and the restore naming the
 * file; a torn last record is accepted in the newest segment holding records only.
 */
@ExtendWith(Seeds.class)
class WalRestoreTest {

	private static final Node SELF = Node.of("node1", "http://127.0.0.1:1");

	private static final Duration WAIT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	/** The times of the writes, each later than the one before. */
	private final RisingClock clock = new RisingClock();

	@Test
	void aTimeBetweenTwoFlushesRestoresExactly(Seeds.Seed given) throws IOException {
		long seed = given.value();
		System.out.println("WalRestoreTest: " + Seeds.rerun(seed));
		Random random = new Random(seed);
		Path data = this.dir.resolve("data");
		Path set = this.dir.resolve("set");
		TreeMap<String, Entry> ledger = new TreeMap<>();
		Map<String, Entry> atT;
		long t;
		NodeSnapshots snapshots;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withIncrementalBackups(true))) {
			write(storage, ledger, random, "a", 0, 200, 0);
			snapshots = new NodeSnapshots(this.dir.resolve("snapshots"), storage, "lsm", SELF, () -> null);
			snapshots.take("s1", this.clock.next()).block(WAIT);
			// v1, then a flush (and a compaction): in a table linked into backups/.
			write(storage, ledger, random, "a", 0, 300, 0);
			storage.compact().block(WAIT);
			// v2, one in five a delete, and keys written for the first time: all in the
			// active memtable.
			write(storage, ledger, random, "a", 0, 300, 5);
			write(storage, ledger, random, "b", 0, 100, 5);
			t = this.clock.last();
			atT = new TreeMap<>(ledger);
			// v3 over every key of v2, in the same memtable, and keys written after T
			// only; the close flushes it, so its table holds v3 alone.
			write(storage, ledger, random, "a", 0, 300, 5);
			write(storage, ledger, random, "b", 0, 100, 5);
			write(storage, ledger, random, "c", 0, 100, 5);
		}
		NodeSnapshots.ClearedBackups cleared = snapshots.clearBackups("s1").block(WAIT);
		assertThat(cleared.walRemoved()).isPositive();
		assertThat(cleared.walKept()).isGreaterThanOrEqualTo(2);
		FileTrees.copy(this.dir.resolve("snapshots/s1"), set.resolve("node1"));
		FileTrees.copy(data.resolve(IncrementalBackup.FOLDER), set.resolve("node1").resolve(Incrementals.FOLDER));

		Map<String, Entry> restored = restored(set, t);
		assertThat(restored).isEqualTo(atT);
		assertThat(restored.keySet()).noneMatch((key) -> key.startsWith("c"));
		assertThat(restored.values()).anyMatch(Entry::isTombstone);

		SnapshotVerifier.Report report = SnapshotVerifier.verify(set.resolve("node1"));
		assertThat(report.walSegments()).isEqualTo(cleared.walKept());
		assertThat(report.walRecords()).isEqualTo(300 + 300 + 100 + 300 + 100 + 100);
		assertThat(report.walGap()).isNull();

		List<Path> segments = segments(set.resolve("node1"));
		Path newest = null;
		Path older = null;
		for (Path segment : segments) {
			if (Files.size(segment) > 0) {
				older = newest;
				newest = segment;
			}
		}
		assertThat(older).isNotNull();

		// A copy made while the node appended: the newest segment's last record torn.
		Path torn = this.dir.resolve("torn");
		FileTrees.copy(set, torn);
		cut(torn.resolve("node1").resolve(set.resolve("node1").relativize(newest)), 5);
		SnapshotVerifier.Report tornReport = SnapshotVerifier.verify(torn.resolve("node1"));
		assertThat(tornReport.walRecords()).isEqualTo(report.walRecords() - 1);
		assertThat(restored(torn, t)).isEqualTo(atT);

		// Torn in an older segment, with records after it: damage.
		Path tornOlder = this.dir.resolve("torn-older");
		FileTrees.copy(set, tornOlder);
		Path cutOlder = tornOlder.resolve("node1").resolve(set.resolve("node1").relativize(older));
		cut(cutOlder, 5);
		assertThatThrownBy(() -> SnapshotVerifier.verify(tornOlder.resolve("node1")))
			.isInstanceOf(SnapshotException.class)
			.hasMessageContaining(cutOlder.toString());

		// One byte flipped in the middle of a segment.
		Path flipped = this.dir.resolve("flipped");
		FileTrees.copy(set, flipped);
		Path damaged = flipped.resolve("node1").resolve(set.resolve("node1").relativize(newest));
		byte[] bytes = Files.readAllBytes(damaged);
		bytes[bytes.length / 2] ^= 0x01;
		Files.write(damaged, bytes);
		assertThatThrownBy(() -> SnapshotVerifier.verify(flipped.resolve("node1")))
			.isInstanceOf(SnapshotException.class)
			.hasMessageContaining(damaged.toString())
			.hasMessageContaining("damaged");
		assertThatThrownBy(() -> Restore.check(flipped, t)).isInstanceOf(SnapshotException.class)
			.hasMessageContaining(damaged.toString());
	}

	/** The linked segments of a node's folder of the set, by number. */
	private static List<Path> segments(Path node) throws IOException {
		Path folder = node.resolve(Incrementals.FOLDER).resolve(WalBackup.FOLDER);
		List<Path> segments = new ArrayList<>();
		for (WalBackup record : WalBackup.list(folder)) {
			segments.add(folder.resolve(record.segment()));
		}
		return segments;
	}

	private static void cut(Path file, int bytes) throws IOException {
		try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
			channel.truncate(channel.size() - bytes);
		}
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
	 * Writes keys {@code prefix from..to}, each once at a later time, one in
	 * {@code deleteOneIn} a delete (never with 0), recorded in the ledger.
	 */
	private void write(LsmStorage storage, TreeMap<String, Entry> ledger, Random random, String prefix, int from,
			int to, int deleteOneIn) {
		for (int i = from; i < to; i++) {
			String key = String.format("%s%05d", prefix, i);
			byte[] k = key.getBytes(StandardCharsets.UTF_8);
			long time = this.clock.next();
			Entry entry = (deleteOneIn > 0 && random.nextInt(deleteOneIn) == 0) ? Entry.tombstone(k, time)
					: Entry.value(k, ("v" + time + "-" + random.nextInt(1_000)).getBytes(StandardCharsets.UTF_8), time);
			storage.upsert(entry).block(WAIT);
			ledger.put(key, entry);
		}
	}

}
