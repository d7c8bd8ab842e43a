package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.memtable.OverwriteRace;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The overwrite race ({@link OverwriteRace}) through the whole engine: same-length and
 * changing-length overwrites against gets and scans, with memtable flushes (a 4 KiB
 * memtable), forced flushes, {@code flush()} and full compactions running beside them,
 * round after round on a fresh store. No read may be torn or go back in time for its
 * reader, and each key must end on its greatest version. Each read is a get or a scan as
 * the test's seeded random says (the seed is printed on failure).
 */
@ExtendWith(Seeds.class)
class EngineOverwriteRaceTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final int ROUNDS = Boolean.getBoolean("quorumkv.storage.long") ? 300 : 20;

	@TempDir
	Path dir;

	@Test
	void readsAndScansNeverTearNorGoBackWhileOverwritesFlushesAndCompactionsRace(Random random) throws Exception {
		for (int round = 0; round < ROUNDS; round++) {
			LsmOptions options = LsmOptions.defaults(this.dir.resolve("round-" + round))
				.withMemtableSize(4096)
				.withBlockSize(256)
				.withCompaction(2, 16 << 10, 2, 8 << 10)
				.withFsync(FsyncPolicy.NEVER);
			try (LsmStorage storage = LsmStorage.open(options)) {
				int[] turn = new int[1];
				OverwriteRace.Target target = new OverwriteRace.Target() {

					@Override
					public void write(int key, Entry entry) {
						storage.upsert(entry).block(TIMEOUT);
					}

					@Override
					public @Nullable Entry read(int key) {
						if (random.nextBoolean()) {
							return storage.get(OverwriteRace.key(key)).block(TIMEOUT);
						}
						List<Entry> scanned = storage.scan(OverwriteRace.key(key), null)
							.take(1)
							.collectList()
							.block(TIMEOUT);
						return scanned.isEmpty() ? null : scanned.getFirst();
					}

					@Override
					public void alongside() {
						try {
							switch (turn[0]++ % 3) {
								case 0 -> storage.forceFlush().get(30, TimeUnit.SECONDS);
								case 1 -> storage.flush().block(TIMEOUT);
								default -> storage.forceCompaction().get(30, TimeUnit.SECONDS);
							}
						}
						catch (Exception ex) {
							throw new IllegalStateException(ex);
						}
					}

				};
				assertThat(OverwriteRace.round(target, 1_500, 2)).as("round %d", round).isEmpty();
				assertThat(storage.stats().healthy()).isTrue();
			}
		}
	}

}
