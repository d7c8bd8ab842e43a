package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.put;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code compactionThroughput} spreads a compaction the engine starts itself over the
 * time its bytes take at that rate; without it the same compaction takes a moment.
 */
class CompactionThroughputTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	@Test
	void aCompactionReadsNoFasterThanTheThroughput() throws Exception {
		long bytesPerSecond = 50_000;
		LsmOptions options = LsmOptions.defaults(this.dir.resolve("paced"))
			.withFsync(FsyncPolicy.NEVER)
			.withCompaction(2, 64L << 20, 10, 64L << 20)
			.withCompactionThroughput(bytesPerSecond);
		try (LsmStorage storage = LsmStorage.open(options)) {
			long started = twoOverlappingTables(storage);
			// The two tables' data blocks: a little less than the bytes the compaction
			// reads.
			long inputs = storage.stats().gauges().get("tables.data.stored.bytes");
			awaitOneCompaction(storage);
			long tookNanos = System.nanoTime() - started;
			// The two tables' bytes (about 120 KB) at 100 KB a second: over a second;
			// half
			// of it at least (the throttle's first piece goes at once).
			assertThat(inputs).isGreaterThan(100_000);
			assertThat(tookNanos).as("a compaction of %d bytes at %d bytes a second", inputs, bytesPerSecond)
				.isGreaterThan(TimeUnit.MILLISECONDS.toNanos(inputs * 1_000 / bytesPerSecond / 2));
		}
	}

	/**
	 * Two tables of the same 2,000 keys (level 0's trigger is 2): the second flush starts
	 * a compaction.
	 */
	private static long twoOverlappingTables(LsmStorage storage) throws Exception {
		java.util.Random random = new java.util.Random(7);
		for (int round = 0; round < 2; round++) {
			for (int i = 0; i < 2_000; i++) {
				// Random digits: the tables' bytes barely compress.
				String value = Long.toString(random.nextLong()) + Long.toString(random.nextLong());
				storage.upsert(put("key" + i, value, 1 + round)).block(TIMEOUT);
			}
			if (round == 1) {
				long started = System.nanoTime();
				storage.forceFlush().get(30, TimeUnit.SECONDS);
				return started;
			}
			storage.forceFlush().get(30, TimeUnit.SECONDS);
		}
		throw new IllegalStateException();
	}

	private static void awaitOneCompaction(LsmStorage storage) throws InterruptedException {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (storage.stats().counters().get("compaction.count") < 1 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(storage.stats().counters().get("compaction.count")).isEqualTo(1);
	}

}
