package io.quorumkv.service.backup;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.support.FileTrees;
import io.quorumkv.service.support.RisingClock;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The window between a snapshot's time {@code T} and the node's freeze ("What T
 * guarantees" in docs/backup.md): a key written before {@code T} and overwritten after
 * it, in the memtable the snapshot then freezes, restores as of {@code T} to its version
 * before {@code T}, from the WAL segments the snapshot links, not to none (the flushed
 * table holds the newer version only); a key written only after {@code T} restores to
 * none. Without incremental backups: the snapshot alone closes the window for a memtable
 * not flushed between the two, and with a hold opened before {@code T} for one flushed
 * too.
 */
class SnapshotWindowTest {

	private static final Node SELF = Node.of("node1", "http://127.0.0.1:1");

	private static final Duration WAIT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	private final RisingClock clock = new RisingClock();

	@Test
	void aVersionOverwrittenBetweenTheSnapshotsTimeAndItsFreezeRestoresAsOfThatTime() {
		Path data = this.dir.resolve("data");
		long t;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data))) {
			put(storage, "flushed", "old");
			storage.compact().block(WAIT);
			put(storage, "k", "before T");
			put(storage, "flushed", "before T");
			t = this.clock.next();
			put(storage, "k", "after T");
			put(storage, "flushed", "after T");
			put(storage, "new", "after T");
			NodeSnapshots snapshots = new NodeSnapshots(this.dir.resolve("snapshots"), storage, "lsm", SELF,
					() -> null);
			assertThat(snapshots.take("s1", t).block(WAIT).asOf()).isEqualTo(t);
		}
		Path set = this.dir.resolve("set");
		FileTrees.copy(this.dir.resolve("snapshots/s1"), set.resolve("node1"));
		SnapshotVerifier.verify(set.resolve("node1"));
		assertThat(restored(set, t)).containsExactlyInAnyOrderEntriesOf(Map.of("k", "before T", "flushed", "before T"));
	}

	/**
	 * With the hold {@code qkv snapshot} opens on every node before it chooses {@code T},
	 * a memtable that is flushed between {@code T} and the snapshot keeps its WAL segment
	 * for the snapshot: the version its flush dropped restores. Without the hold the
	 * segment was deleted by the flush, and the key restored to none.
	 */
	@Test
	void aMemtableFlushedBetweenTheHoldAndTheSnapshotKeepsItsOverwrittenVersions() {
		Path data = this.dir.resolve("data");
		long t;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withMemtableSize(4 << 10))) {
			NodeSnapshots snapshots = new NodeSnapshots(this.dir.resolve("snapshots"), storage, "lsm", SELF,
					() -> null);
			put(storage, "k", "before T");
			assertThat(snapshots.hold("s1").block(WAIT)).isEqualTo(NodeSnapshots.HOLD_LIMIT);
			t = this.clock.next();
			put(storage, "k", "after T");
			// Fills the memtable that has both versions of k: its flush drops the older.
			long flushes = storage.stats().counters().get("flush.count");
			for (int i = 0; i < 200 && storage.stats().counters().get("flush.count") == flushes; i++) {
				put(storage, "new" + i, "after T".repeat(10));
			}
			long until = System.nanoTime() + WAIT.toNanos();
			while (storage.stats().counters().get("flush.count") == flushes && System.nanoTime() < until) {
				Thread.onSpinWait();
			}
			assertThat(storage.stats().counters().get("flush.count")).isGreaterThan(flushes);
			put(storage, "k", "later still");
			assertThat(snapshots.held()).containsExactly("s1");
			assertThat(snapshots.take("s1", t).block(WAIT).asOf()).isEqualTo(t);
			assertThat(snapshots.held()).as("the snapshot ends its hold").isEmpty();
		}
		Path set = this.dir.resolve("set");
		FileTrees.copy(this.dir.resolve("snapshots/s1"), set.resolve("node1"));
		SnapshotVerifier.verify(set.resolve("node1"));
		assertThat(restored(set, t)).containsExactlyInAnyOrderEntriesOf(Map.of("k", "before T"));
	}

	private void put(LsmStorage storage, String key, String value) {
		storage.upsert(Entry.value(bytes(key), bytes(value), this.clock.next())).block(WAIT);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static Map<String, String> restored(Path set, long time) {
		TreeMap<String, String> restored = new TreeMap<>();
		AtomicLong keys = new AtomicLong();
		AtomicLong newerOnly = new AtomicLong();
		Restore.entries(Restore.check(set, time), keys, newerOnly)
			.doOnNext((e) -> restored.put(new String(e.key(), StandardCharsets.UTF_8),
					new String(e.value(), StandardCharsets.UTF_8)))
			.blockLast(WAIT);
		System.out.println("SnapshotWindowTest: " + keys + " keys, " + newerOnly + " with versions after " + time
				+ " only: " + restored);
		return restored;
	}

}
