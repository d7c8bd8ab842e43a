package io.quorumkv.storage.h2;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend's own online backup as a snapshot: it holds every write completed before it
 * (values, tombstones, expiries) and none after, and reads back as a store opened on a
 * copy, leaving the snapshot's files as they were.
 */
class H2SnapshotTest {

	private static final Duration WAIT = Duration.ofSeconds(60);

	@Test
	void aSnapshotHoldsTheWritesBeforeItAndReadsBack(@TempDir Path dir) throws Exception {
		long base = System.currentTimeMillis() * 1_000;
		long expiry = base + 3_600_000_000L;
		Map<String, Entry> expected = new TreeMap<>();
		Path snapshot = Files.createDirectories(dir.resolve("snapshot"));
		List<String> files;
		try (H2Storage storage = H2Storage.open(H2StorageOptions.defaults(dir.resolve("data")))) {
			for (int i = 0; i < 200; i++) {
				byte[] key = String.format("key%04d", i).getBytes(StandardCharsets.US_ASCII);
				Entry entry = switch (i % 3) {
					case 0 -> Entry.tombstone(key, base + i);
					case 1 -> Entry.expiring(key, ("v" + i).getBytes(StandardCharsets.UTF_8), base + i, expiry);
					default -> Entry.value(key, ("v" + i).getBytes(StandardCharsets.UTF_8), base + i);
				};
				storage.upsert(entry).block(WAIT);
				expected.put(new String(key, StandardCharsets.US_ASCII), entry);
			}
			files = storage.snapshot(snapshot).block(WAIT);
			assertThat(storage.snapshotFormat()).isEqualTo(H2Storage.SNAPSHOT_FORMAT);
			for (int i = 0; i < 300; i++) {
				byte[] key = String.format("key%04d", i).getBytes(StandardCharsets.US_ASCII);
				storage.upsert(Entry.value(key, "later".getBytes(StandardCharsets.UTF_8), base + 10_000 + i))
					.block(WAIT);
			}
		}
		assertThat(files).isNotEmpty().allMatch((name) -> Files.isRegularFile(snapshot.resolve(name)));
		try (H2Storage copy = H2Storage.openSnapshot(snapshot, dir.resolve("work"), Clock.systemUTC())) {
			Map<String, Entry> read = new TreeMap<>();
			for (Entry entry : copy.scan(new byte[0], null).collectList().block(WAIT)) {
				read.put(new String(entry.key(), StandardCharsets.US_ASCII), entry);
			}
			assertThat(read).isEqualTo(expected);
		}
	}

}
