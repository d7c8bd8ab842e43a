package io.quorumkv.storage.lsm.wal;

import static io.quorumkv.storage.contract.Entries.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SyncerTest {

	private static final Duration PERIOD = Duration.ofMillis(5);

	@TempDir
	Path dir;

	@Test
	void anIdleSyncerRestsUntilTheNextWriteAndThenForcesItWithinAPeriod() throws Exception {
		AtomicInteger looks = new AtomicInteger();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		try (WalWriter writer = WalWriter.create(FileIo.real(), this.dir.resolve("wal-000001.log"), 1);
				Syncer syncer = new Syncer("test-syncer", () -> {
					looks.incrementAndGet();
					return List.of(writer);
				}, PERIOD, failure::set)) {
			Thread.sleep(300);
			// 60 periods went by with nothing written: a few looks, not one a period.
			assertThat(looks.get()).isLessThanOrEqualTo(4);
			long end = writer.append(Entry.value(bytes("k"), bytes("v"), 1));
			syncer.written();
			awaitSynced(writer, end);
			int afterWrite = looks.get();
			Thread.sleep(300);
			assertThat(looks.get() - afterWrite).isLessThanOrEqualTo(4);
		}
		assertThat(failure.get()).isNull();
	}

	@Test
	void writesThatRaceTheSyncerGoingToRestAreForcedWithinAPeriod() throws Exception {
		AtomicReference<Throwable> failure = new AtomicReference<>();
		try (WalWriter writer = WalWriter.create(FileIo.real(), this.dir.resolve("wal-000002.log"), 2);
				Syncer syncer = new Syncer("test-syncer", () -> List.of(writer), PERIOD, failure::set)) {
			for (int i = 0; i < 200; i++) {
				// Land writes just before, at and after the moment the syncer rests.
				Thread.sleep(ThreadLocalRandom.current().nextInt(12));
				long end = writer.append(Entry.value(bytes("k" + i), bytes("v"), i));
				syncer.written();
				awaitSynced(writer, end);
			}
		}
		assertThat(failure.get()).isNull();
	}

	/** A period is 5 ms; a second allows for a slow, shared machine. */
	private static void awaitSynced(WalWriter writer, long end) throws InterruptedException, IOException {
		long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
		while (!writer.isSyncedTo(end)) {
			assertThat(System.nanoTime() - deadline).as("the write was not forced within a second").isNegative();
			Thread.sleep(1);
		}
	}

}
