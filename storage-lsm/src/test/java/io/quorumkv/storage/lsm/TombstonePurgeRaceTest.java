package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tombstone is purged only if nothing outside the compaction holds a version it
 * shadows; a write older than the tombstone that arrives while the compaction runs (after
 * its purge decision, before it is published) is such a version, and must stay shadowed:
 * a read that returned the tombstone after the write must not be followed by one that
 * returns the write.
 */
class TombstonePurgeRaceTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	private static byte[] bytes(String s) {
		return s.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void aLateWriteDuringThePurgingCompactionStaysShadowed() throws Exception {
		CountDownLatch decided = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		FaultFileIo io = new FaultFileIo(this.dir.resolve("data"), 1).onEachOperation((op, path) -> {
			if (op == Op.CREATE && path.getFileName().toString().endsWith(".sst.tmp")
					&& Thread.currentThread().getName().startsWith("lsm-compaction")) {
				decided.countDown();
				await(release);
			}
		});
		LsmOptions options = LsmOptions.defaults(this.dir.resolve("data"))
			.withFsync(FsyncPolicy.NEVER)
			.withCompaction(2, 8 << 20, 10, 8 << 20)
			.withTombstoneGracePeriod(Duration.ZERO);
		try (LsmStorage storage = LsmStorage.open(options, io)) {
			storage.upsert(Entry.value(bytes("k"), bytes("old"), 5)).block(TIMEOUT);
			storage.upsert(Entry.value(bytes("z"), bytes("keeps the output"), 5)).block(TIMEOUT);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			storage.upsert(Entry.tombstone(bytes("k"), 10)).block(TIMEOUT);
			// The second level-0 table starts a compaction, which decides to purge the
			// tombstone (nothing else holds "k") and is held before its output is
			// written.
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			assertThat(decided.await(30, TimeUnit.SECONDS)).as("compaction under way").isTrue();
			Entry late = Entry.value(bytes("k"), bytes("late"), 7);
			storage.upsert(late).block(TIMEOUT);
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).as("the late write loses to the tombstone")
				.isEqualTo(Entry.tombstone(bytes("k"), 10));
			release.countDown();
			awaitCompactions(storage, 1);
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).as("after the compaction")
				.isIn(Entry.tombstone(bytes("k"), 10), null);
		}
		finally {
			release.countDown();
		}
	}

	private static void awaitCompactions(LsmStorage storage, long count) throws InterruptedException {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (storage.stats().counters().get("compaction.count") < count && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await(20, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
