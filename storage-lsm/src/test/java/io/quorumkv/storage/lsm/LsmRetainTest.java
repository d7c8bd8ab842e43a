package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A paced clean-up ({@link LsmStorage#retain(java.util.function.Predicate, long)}) holds
 * the compaction thread for as long as its rate makes it last: it must not make the
 * writers stall behind level 0 meanwhile.
 */
class LsmRetainTest {

	private static final byte[] VALUE = new byte[100];

	@Test
	void aPacedCleanUpGoesAtFullSpeedOnceLevelZeroWaitsForIt(@TempDir Path dir) throws Exception {
		try (LsmStorage storage = LsmStorage
			.open(LsmOptions.defaults(dir).withMemtableSize(64 << 10).withCompaction(2, 256 << 10, 10, 128 << 10))) {
			for (int i = 0; i < 2_000; i++) {
				storage.upsert(Entry.value(key("old", i), VALUE, 1)).block();
			}
			storage.compact().block(Duration.ofSeconds(30));
			// 2,000 entries at 100 a second: 20 s, were it paced throughout.
			long start = System.nanoTime();
			CompletableFuture<Long> retain = storage.retain((key) -> key[0] != 'o' || key[key.length - 1] % 2 == 0, 100)
				.toFuture();
			Thread.sleep(300);
			assertThat(retain).as("still paced while level 0 is quiet").isNotDone();
			// Three memtables' worth of writes: level-0 tables that reach the compaction
			// trigger (2) while the clean-up holds the compaction thread; writers stall
			// at twice the trigger.
			for (int i = 0; i < 2_000; i++) {
				storage.upsert(Entry.value(key("new", i), VALUE, 2)).block(Duration.ofSeconds(30));
			}
			long removed = retain.get(10, TimeUnit.SECONDS);
			assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).isLessThan(10);
			assertThat(removed).isPositive();
			assertThat(storage.get(key("new", 1_999)).block()).isNotNull();
		}
	}

	private static byte[] key(String prefix, int i) {
		return (prefix + String.format("%06d", i)).getBytes(StandardCharsets.US_ASCII);
	}

}
