package io.quorumkv.storage.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Snapshots;
import io.quorumkv.storage.Storage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract of a backend's {@link Snapshots}, for the backends whose copy is read back
 * by opening a store on it: the copy holds every write completed before it (values,
 * tombstones, expiries) and none after, and reads back as a store opened on a copy,
 * leaving the snapshot's files as they were. A backend's test extends it with how to open
 * its store and its snapshot.
 *
 * @param <S> the backend's storage, which has the capability
 */
public abstract class SnapshotContract<S extends Storage & Snapshots> {

	private static final Duration WAIT = Duration.ofSeconds(60);

	/** Opens (or creates) the backend's store in {@code dir}. */
	protected abstract S open(Path dir);

	/** Opens a store on a copy of {@code snapshot} made in {@code workDir}. */
	protected abstract Storage openSnapshot(Path snapshot, Path workDir) throws IOException;

	/** The format name the backend's snapshots carry. */
	protected abstract String format();

	@Test
	void aSnapshotHoldsTheWritesBeforeItAndReadsBack(@TempDir Path dir) throws Exception {
		long base = System.currentTimeMillis() * 1_000;
		long expiry = base + 3_600_000_000L;
		Map<String, Entry> expected = new TreeMap<>();
		Path snapshot = Files.createDirectories(dir.resolve("snapshot"));
		List<String> files;
		try (S storage = open(dir.resolve("data"))) {
			for (int i = 0; i < 200; i++) {
				byte[] key = key(i);
				Entry entry = switch (i % 3) {
					case 0 -> Entry.tombstone(key, base + i);
					case 1 -> Entry.expiring(key, ("v" + i).getBytes(StandardCharsets.UTF_8), base + i, expiry);
					default -> Entry.value(key, ("v" + i).getBytes(StandardCharsets.UTF_8), base + i);
				};
				storage.upsert(entry).block(WAIT);
				expected.put(new String(key, StandardCharsets.US_ASCII), entry);
			}
			files = storage.snapshot(snapshot).block(WAIT);
			assertThat(storage.snapshotFormat()).isEqualTo(format());
			for (int i = 0; i < 300; i++) {
				storage.upsert(Entry.value(key(i), "later".getBytes(StandardCharsets.UTF_8), base + 10_000 + i))
					.block(WAIT);
			}
		}
		assertThat(files).isNotEmpty().allMatch((name) -> Files.isRegularFile(snapshot.resolve(name)));
		try (Storage copy = openSnapshot(snapshot, dir.resolve("work"))) {
			Map<String, Entry> read = new TreeMap<>();
			for (Entry entry : copy.scan(new byte[0], null).collectList().block(WAIT)) {
				read.put(new String(entry.key(), StandardCharsets.US_ASCII), entry);
			}
			assertThat(read).isEqualTo(expected);
		}
	}

	private static byte[] key(int i) {
		return String.format("key%04d", i).getBytes(StandardCharsets.US_ASCII);
	}

}
