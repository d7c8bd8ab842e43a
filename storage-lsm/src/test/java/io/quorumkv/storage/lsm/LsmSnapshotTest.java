package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.Snapshots;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.wal.WalReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot holds every write completed before it, in hard links that later writes,
 * flushes and compactions of the store do not change, and its folder reads back (and
 * opens as a store) with exactly those entries.
 */
class LsmSnapshotTest {

	@Test
	void aSnapshotKeepsTheWritesBeforeItWhateverTheStoreDoesAfter(@TempDir Path dir) throws Exception {
		Path data = dir.resolve("data");
		Path snapshot = Files.createDirectories(dir.resolve("snap"));
		TreeMap<String, Entry> expected = new TreeMap<>();
		// Recent timestamps: compactions keep tombstones within the grace period.
		long base = System.currentTimeMillis() * 1_000;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withMemtableSize(32 << 10))) {
			for (int i = 0; i < 1_000; i++) {
				Entry entry = (i % 10 == 0) ? Entry.tombstone(key(i), base + i)
						: Entry.value(key(i), ("v" + i).getBytes(StandardCharsets.UTF_8), base + i);
				storage.upsert(entry).block();
				expected.put(new String(entry.key(), StandardCharsets.UTF_8), entry);
			}
			// Part of them are in tables, the rest in the memtable: the snapshot flushes.
			List<String> files = storage.snapshot(snapshot).block(Duration.ofSeconds(30));
			assertThat(files).contains("MANIFEST").anyMatch((name) -> name.endsWith(".sst"));
			assertThat(files).allMatch((name) -> Files.exists(snapshot.resolve(name)));
			// Each table's digest is linked with it: the snapshot's manifest reads it.
			assertThat(files.stream().filter((name) -> name.endsWith(".sst")).map((name) -> name + ".crc32c"))
				.isNotEmpty()
				.allMatch(files::contains);
			for (int i = 0; i < 1_000; i++) {
				storage.upsert(Entry.value(key(i), "later".getBytes(StandardCharsets.UTF_8), base + 5_000 + i)).block();
			}
			storage.compact().block(Duration.ofSeconds(30));
		}
		// The compaction's input tables went with their digests.
		try (var names = Files.list(data)) {
			List<String> all = names.map((p) -> p.getFileName().toString()).toList();
			assertThat(all.stream().filter((name) -> name.endsWith(".crc32c")))
				.containsExactlyInAnyOrderElementsOf(
						all.stream().filter((name) -> name.endsWith(".sst")).map((name) -> name + ".crc32c").toList())
				.isNotEmpty();
		}
		assertThat(read(snapshot)).isEqualTo(expected);
		// Opened as a store (a restore in place), keeping its tombstones.
		try (LsmStorage restored = LsmStorage.open(LsmOptions.defaults(snapshot), java.time.Clock.systemUTC(),
				io.quorumkv.storage.PurgePolicy.KEEP_ALL)) {
			TreeMap<String, Entry> scanned = new TreeMap<>();
			restored.scan(new byte[0], null)
				.toIterable()
				.forEach((e) -> scanned.put(new String(e.key(), StandardCharsets.UTF_8), e));
			assertThat(scanned).isEqualTo(expected);
		}
	}

	/**
	 * A snapshot freezes the memtable once: the writes that land while it flushes stay in
	 * the active memtable. It used to freeze that one too (its flush rotated again), so a
	 * write landing between the two made two memtables wait for their flush, the limit
	 * ({@code max-immutable-memtables}, 2) at which writers stall until the first flush
	 * ends: seconds of stalled PUTs per snapshot under load (scripts/backup-bench.sh).
	 */
	@Test
	void aSnapshotFlushesOneMemtableWhileWritesGoOn(@TempDir Path dir) throws Exception {
		int snapshots = 20;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(dir.resolve("data")))) {
			storage.upsert(Entry.value(key(0), new byte[8], 1)).block();
			java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
			java.util.concurrent.atomic.AtomicLong writes = new java.util.concurrent.atomic.AtomicLong();
			Thread writer = Thread.ofPlatform().start(() -> {
				for (long i = 1; writing.get() && i < 50_000_000L; i++) {
					storage.upsert(Entry.value(key((int) (i % 1_000)), new byte[8], i + 1)).block();
					writes.incrementAndGet();
				}
			});
			long flushesBefore = storage.stats().counters().get("flush.count");
			try {
				for (int i = 0; i < snapshots; i++) {
					long before = writes.get();
					// Each snapshot starts with writes under way.
					long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
					while (writes.get() < before + 20 && System.nanoTime() < until) {
						Thread.onSpinWait();
					}
					storage.snapshot(Files.createDirectories(dir.resolve("snap-" + i))).block(Duration.ofSeconds(30));
				}
			}
			finally {
				writing.set(false);
				writer.join(Duration.ofSeconds(30));
			}
			assertThat(storage.stats().counters().get("flush.count") - flushesBefore)
				.as("flushes of %d snapshots (%d writes beside them)", snapshots, writes.get())
				.isEqualTo(snapshots);
		}
	}

	/**
	 * A hold opened before a snapshot keeps every version the store had then, though the
	 * store overwrites, flushes and is asked to compact before the snapshot: a restore as
	 * of any time since finds each key's version of that time. Without it a flush deleted
	 * its memtable's WAL segment (the only file with a version the memtable overwrote)
	 * and a compaction merged the old table away.
	 */
	@Test
	void aHoldKeepsEveryVersionFromItsStartUntilTheSnapshot(@TempDir Path dir) throws Exception {
		int keys = 500;
		Path snapshot = Files.createDirectories(dir.resolve("snap"));
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(dir.resolve("data")).withMemtableSize(8 << 10))) {
			writeAll(storage, keys, 1);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			CompletableFuture<Void> compaction;
			try (Snapshots.Hold hold = storage.hold()) {
				// Each key twice in a memtable (8 KB: several flushed meanwhile), then
				// once
				// more in the active one.
				writeAll(storage, keys, 2);
				writeAll(storage, keys, 3);
				storage.forceFlush().get(30, TimeUnit.SECONDS);
				writeAll(storage, keys, 4);
				compaction = storage.forceCompaction();
				Thread.sleep(200);
				assertThat(compaction).as("a merge while held").isNotDone();
				storage.snapshot(snapshot).block(Duration.ofSeconds(30));
			}
			compaction.get(30, TimeUnit.SECONDS);
		}
		List<Entry> versions = new ArrayList<>();
		try (LsmSnapshotReader reader = LsmSnapshotReader.open(snapshot)) {
			reader.tables().forEach((table) -> table.forEachRemaining(versions::add));
		}
		try (var segments = Files.list(snapshot.resolve(LsmStorage.WAL_SEGMENTS))) {
			for (Path segment : segments.toList()) {
				WalReader.read(FileIo.real(), segment, versions::add);
			}
		}
		for (long time = 1; time <= 4; time++) {
			TreeMap<String, Long> asOf = new TreeMap<>();
			for (Entry entry : versions) {
				if (entry.timestamp() <= time) {
					asOf.merge(new String(entry.key(), StandardCharsets.UTF_8), entry.timestamp(), Math::max);
				}
			}
			long expected = time;
			assertThat(asOf).as("as of %d", time)
				.hasSize(keys)
				.allSatisfy((key, found) -> assertThat(found).isEqualTo(expected));
		}
	}

	private static void writeAll(LsmStorage storage, int keys, long timestamp) {
		for (int i = 0; i < keys; i++) {
			storage.upsert(Entry.value(key(i), ("v" + timestamp).getBytes(StandardCharsets.UTF_8), timestamp)).block();
		}
	}

	/** Every table's entries, the greatest per key. */
	private static TreeMap<String, Entry> read(Path snapshot) throws Exception {
		TreeMap<String, Entry> all = new TreeMap<>();
		try (LsmSnapshotReader reader = LsmSnapshotReader.open(snapshot)) {
			for (Iterator<Entry> table : reader.tables()) {
				byte[] previous = null;
				while (table.hasNext()) {
					Entry entry = table.next();
					assertThat(previous == null || Keys.ORDER.compare(previous, entry.key()) < 0).isTrue();
					previous = entry.key();
					all.merge(new String(entry.key(), StandardCharsets.UTF_8), entry,
							(a, b) -> (io.quorumkv.storage.EntryOrder.INSTANCE.compare(a, b) >= 0) ? a : b);
				}
			}
		}
		return all;
	}

	private static byte[] key(int i) {
		return String.format("key%06d", i).getBytes(StandardCharsets.US_ASCII);
	}

}
