package io.quorumkv.storage.derby;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.StorageOverloadedException;
import io.quorumkv.storage.contract.Entries;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;

/** A saturated executor refuses work with StorageOverloadedException, then recovers. */
class DerbyStorageOverloadTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	@Test
	void fullQueueBecomesStorageOverloadedException() throws Exception {
		DerbyStorageOptions options = DerbyStorageOptions.defaults(this.dir).withPoolSize(1).withMaxQueuedTasks(2);
		try (DerbyStorage storage = DerbyStorage.open(options)) {
			CountDownLatch running = new CountDownLatch(1);
			CountDownLatch release = new CountDownLatch(1);
			storage.executor().beforeTask(() -> {
				running.countDown();
				await(release);
			});
			byte[] key = Entries.bytes("k");
			Disposable busy = storage.get(key).subscribe();
			assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
			Disposable queued1 = storage.get(key).subscribe();
			Disposable queued2 = storage.get(key).subscribe();
			assertThat(storage.stats().gauges()).containsEntry("executor.queued", 2L);

			assertThatThrownBy(() -> storage.upsert(Entry.value(key, Entries.bytes("v"), 1)).block(TIMEOUT))
				.isInstanceOf(StorageOverloadedException.class)
				.hasMessageContaining("queue is full");

			storage.executor().beforeTask(null);
			release.countDown();
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
			while (storage.stats().gauges().get("executor.queued") > 0 && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
			storage.upsert(Entry.value(key, Entries.bytes("v"), 1)).block(TIMEOUT);
			assertThat(storage.get(key).block(TIMEOUT)).isEqualTo(Entry.value(key, Entries.bytes("v"), 1));
			busy.dispose();
			queued1.dispose();
			queued2.dispose();
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
