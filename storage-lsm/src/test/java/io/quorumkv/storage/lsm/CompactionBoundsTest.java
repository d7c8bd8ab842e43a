package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.StorageStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Overwrite-heavy load: 10,000 keys overwritten 100 times (a million upserts) through a
 * 256 KiB memtable, 48-byte values (about 0.7 MB of live data). The bounds stated in
 * docs/storage-lsm.md must hold: the folder stays under 4x the live data plus 3 memtables
 * (the level-0 backlog that compaction may lag behind, and the WAL of the active and
 * frozen memtables) at every sample, and a lookup reads on average at most 1.5 tables
 * (worst case: level-0 tables + one per deeper level).
 */
class CompactionBoundsTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private static final int KEYS = 10_000;

	private static final int ROUNDS = 100;

	private static final long MEMTABLE = 256 << 10;

	@TempDir
	Path dir;

	private static byte[] key(int i) {
		return String.format("key-%05d", i).getBytes(StandardCharsets.UTF_8);
	}

	private static byte[] value(int round, int i) {
		return String.format("v%03d-%043d", round, i).getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void spaceAndReadAmplificationStayBoundedUnderOverwrites() throws Exception {
		LsmOptions options = LsmOptions.defaults(this.dir)
			.withMemtableSize(MEMTABLE)
			.withCompaction(4, 1 << 20, 10, 256 << 10)
			.withFsync(FsyncPolicy.NEVER);
		long maxFolder = 0;
		try (LsmStorage storage = LsmStorage.open(options)) {
			for (int round = 0; round < ROUNDS; round++) {
				for (int i = 0; i < KEYS; i++) {
					storage.upsert(Entry.value(key(i), value(round, i), (long) round * KEYS + i)).block(TIMEOUT);
				}
				maxFolder = Math.max(maxFolder, TestDirs.size(this.dir));
			}
			StorageStats before = storage.stats();
			for (int i = 0; i < KEYS; i++) {
				assertThat(storage.get(key(i)).block(TIMEOUT))
					.isEqualTo(Entry.value(key(i), value(ROUNDS - 1, i), (long) (ROUNDS - 1) * KEYS + i));
			}
			StorageStats after = storage.stats();
			long consulted = after.counters().get("get.tables.consulted")
					- before.counters().get("get.tables.consulted");
			assertThat(consulted / (double) KEYS).as("tables read per lookup, stats %s", after)
				.isLessThanOrEqualTo(1.5);
			Map<String, Long> gauges = after.gauges();
			assertThat(gauges.get("tables.level.0"))
				.isLessThanOrEqualTo((long) LsmEngine.LEVEL0_STOP_FACTOR * options.level0CompactionTrigger()
						+ options.maxImmutableMemtables());
			assertThat(after.counters().get("compaction.count")).isPositive();

			storage.forceFlush().get(60, TimeUnit.SECONDS);
			storage.forceCompaction().get(60, TimeUnit.SECONDS);
			long live = storage.stats().gauges().get("disk.bytes") - storage.stats().gauges().get("memtable.bytes");
			long bound = 4 * live + 3 * MEMTABLE;
			assertThat(maxFolder).as("largest folder size; live data %d bytes", live).isLessThan(bound);
		}
	}

}
