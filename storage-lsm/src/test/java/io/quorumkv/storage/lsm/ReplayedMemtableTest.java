package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.numberedKey;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery serves the memtable it replayed from the WAL as a frozen one and flushes it in
 * the background, instead of writing it to a table before the store opens: the writes are
 * readable at once, and until that flush their segments stay live, so a second crash
 * replays them again.
 */
class ReplayedMemtableTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path root;

	/**
	 * Small tables, but a memtable no write below fills: nothing rotates before the
	 * crash.
	 */
	private static LsmOptions options(Path dir) {
		return PowerLossRun.options(dir, FsyncPolicy.NEVER).withMemtableSize(1 << 20);
	}

	private static Entry entry(int i) {
		return Entry.value(numberedKey(i), ("v" + i).getBytes(), 1_000 + i);
	}

	/** {@code count} writes in the active memtable, then a process crash's image. */
	private Path crashedWith(int count) throws IOException {
		Path dir = this.root.resolve("live");
		FaultFileIo io = new FaultFileIo(dir, 1);
		LsmStorage storage = LsmStorage.open(options(dir), io);
		try {
			for (int i = 0; i < count; i++) {
				storage.upsert(entry(i)).block(TIMEOUT);
			}
			return io.powerLoss(Tear.KEEP_WRITTEN, this.root.resolve("crashed")).folder();
		}
		finally {
			storage.close();
		}
	}

	@Test
	void theReplayedWritesAreServedBeforeTheirFlushAndReplayedAgainAfterASecondCrash() throws Exception {
		Path crashed = crashedWith(200);
		CountDownLatch release = new CountDownLatch(1);
		FaultFileIo held = new FaultFileIo(crashed, 2).holdingTableWrites(release);
		long opened = System.nanoTime();
		LsmStorage reopened = LsmStorage.open(options(crashed), held);
		Path again;
		try {
			assertThat(Duration.ofNanos(System.nanoTime() - opened)).as("open waits for no table")
				.isLessThan(Duration.ofSeconds(10));
			assertThat(reopened.stats().gauges().get("memtables.immutable")).as("the replayed memtable, frozen")
				.isEqualTo(1);
			assertThat(reopened.stats().gauges().get("tables")).isZero();
			for (int i = 0; i < 200; i++) {
				assertThat(reopened.get(numberedKey(i)).block(TIMEOUT)).isEqualTo(entry(i));
			}
			for (int i = 200; i < 210; i++) {
				reopened.upsert(entry(i)).block(TIMEOUT);
			}
			again = held.powerLoss(Tear.KEEP_WRITTEN, this.root.resolve("again")).folder();
		}
		finally {
			release.countDown();
			reopened.close();
		}
		try (LsmStorage third = LsmStorage.open(options(again))) {
			for (int i = 0; i < 210; i++) {
				assertThat(third.get(numberedKey(i)).block(TIMEOUT)).as("entry %d", i).isEqualTo(entry(i));
			}
		}
	}

	@Test
	void theReplayedSegmentsAreDeletedOnceTheirMemtableIsInATable() throws Exception {
		Path crashed = crashedWith(200);
		List<String> replayed = walFiles(crashed);
		assertThat(replayed).isNotEmpty();
		try (LsmStorage storage = LsmStorage.open(options(crashed))) {
			// The flush thread takes the frozen memtable first; this completes after it.
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			assertThat(storage.stats().gauges().get("memtables.immutable")).isZero();
			assertThat(storage.stats().gauges().get("tables")).isPositive();
			assertThat(walFiles(crashed)).doesNotContainAnyElementsOf(replayed);
			for (int i = 0; i < 200; i++) {
				assertThat(storage.get(numberedKey(i)).block(TIMEOUT)).isEqualTo(entry(i));
			}
		}
		try (LsmStorage storage = LsmStorage.open(options(crashed))) {
			for (int i = 0; i < 200; i++) {
				assertThat(storage.get(numberedKey(i)).block(TIMEOUT)).isEqualTo(entry(i));
			}
		}
	}

	private static List<String> walFiles(Path dir) throws IOException {
		try (Stream<Path> files = Files.list(dir)) {
			return files.map((p) -> p.getFileName().toString()).filter((n) -> n.startsWith("wal-")).sorted().toList();
		}
	}

}
