package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.numberedKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.lsm.io.Fault;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The engine on a failing disk (the fault-injecting file layer): each fault fails the
 * operation that met it with an error naming it, becomes the engine's sticky failure
 * (writes refused, reads served, health down), and loses no acknowledged write: the store
 * reopens with everything it acknowledged.
 */
class FaultInjectionTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path root;

	private static Entry entry(int i) {
		return Entry.value(numberedKey(i), ("value-" + i + "-" + "x".repeat(60)).getBytes(), 1_000 + i);
	}

	private static LsmOptions options(Path dir, FsyncPolicy policy) {
		return PowerLossRun.options(dir, policy);
	}

	/**
	 * With {@code INTERVAL}, a write acknowledged longer than the sync window ago
	 * survives a power loss, also when its memtable was frozen and its flush is held up:
	 * the periodic sync must force the frozen memtables' segments, not only the active
	 * one.
	 */
	@Test
	void intervalSyncCoversTheSegmentOfAFrozenMemtableWhoseFlushIsHeldUp() throws Exception {
		Path dir = this.root.resolve("live");
		CountDownLatch release = new CountDownLatch(1);
		FaultFileIo io = new FaultFileIo(dir, 1).onEachOperation((op, path) -> {
			if (op == Op.CREATE && path.getFileName().toString().endsWith(".sst.tmp")) {
				await(release);
			}
		});
		List<Entry> acked = new ArrayList<>();
		LsmStorage storage = LsmStorage.open(options(dir, FsyncPolicy.INTERVAL), io);
		try {
			for (int i = 0; i < 200 && immutables(storage) == 0; i++) {
				storage.upsert(entry(i)).block(TIMEOUT);
				acked.add(entry(i));
			}
			assertThat(immutables(storage)).as("a memtable frozen, its flush held up").isOne();
			for (int i = 1_000; i < 1_005; i++) {
				storage.upsert(entry(i)).block(TIMEOUT);
				acked.add(entry(i));
			}
			Thread.sleep(PowerLossRun.WINDOW.plusMillis(200));
			io.powerLoss(Tear.DROP_UNSYNCED, this.root.resolve("image"));
		}
		finally {
			release.countDown();
			storage.close();
		}
		try (LsmStorage recovered = LsmStorage.open(options(this.root.resolve("image"), FsyncPolicy.INTERVAL))) {
			List<Entry> lost = acked.stream().filter((e) -> !e.equals(recovered.get(e.key()).block(TIMEOUT))).toList();
			assertThat(lost).as("acknowledged over %s before the power loss", PowerLossRun.WINDOW).isEmpty();
		}
	}

	private static long immutables(LsmStorage storage) {
		return storage.stats().gauges().get("memtables.immutable");
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
