package io.quorumkv.storage.derby;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.Entries;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** A scan reads pages as demand arrives, not the whole range up front. */
class DerbyScanBackpressureTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	@Test
	void pagesAreReadOnDemandOnly() throws Exception {
		DerbyStorageOptions options = DerbyStorageOptions.defaults(this.dir).withScanBatchSize(10);
		try (DerbyStorage storage = DerbyStorage.open(options)) {
			Flux.range(0, 200)
				.flatMap((i) -> storage.upsert(Entry.value(Entries.numberedKey(i), Entries.bytes("v"), 1)), 8)
				.blockLast(TIMEOUT);
			AtomicInteger tasks = new AtomicInteger();
			storage.executor().beforeTask(tasks::incrementAndGet);
			StepVerifier.create(storage.scan(Entries.numberedKey(0), null), 5)
				.expectNextCount(5)
				.then(() -> sleep(300))
				.then(() -> assertThat(tasks.get()).as("pages read for 5 of 200 rows").isBetween(1, 2))
				.thenRequest(30)
				.expectNextCount(30)
				.then(() -> sleep(300))
				.then(() -> assertThat(tasks.get()).as("pages read for 35 of 200 rows").isBetween(4, 5))
				.thenCancel()
				.verify(TIMEOUT);
			storage.executor().beforeTask(null);
			assertThat(storage.scan(Entries.numberedKey(0), null).count().block(TIMEOUT)).isEqualTo(200);
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
