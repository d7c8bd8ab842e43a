package io.quorumkv.storage.h2;

import static io.quorumkv.storage.contract.Entries.bytes;
import static io.quorumkv.storage.contract.Entries.numberedKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.StorageOverloadedException;
import io.quorumkv.storage.StorageStats;
import io.r2dbc.spi.Connection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** What the contract kit does not cover: paging, overload, durability modes, stats. */
class H2StorageTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	@TempDir
	Path dir;

	@Test
	void scanIsConsumedLazilyPageByPage() {
		int keys = 50_000;
		int pageSize = 100;
		H2StorageOptions options = H2StorageOptions.defaults(this.dir)
			.withDurability(H2Durability.WRITE_DELAY, Duration.ofMillis(500))
			.withScanPageSize(pageSize);
		try (H2Storage storage = H2Storage.open(options)) {
			Flux.range(0, keys)
				.flatMap((i) -> storage.upsert(Entry.value(numberedKey(i), bytes("v" + i), 1)), 8)
				.then()
				.block(TIMEOUT);
			StepVerifier.create(storage.scan(numberedKey(0), null), 10)
				.expectNextCount(10)
				.then(() -> assertThat(pages(storage)).as("pages read for 10 of %d rows", keys).isLessThanOrEqualTo(3))
				.thenCancel()
				.verify(TIMEOUT);
		}
		// The full scan runs on a storage of its own, so that its counter holds its own
		// pages only. On the storage above, the cancelled scan's read-ahead page is
		// fetched (and counted) on an H2 thread when the first page completes, which
		// races with the cancel on this thread: it can be counted after the cancel.
		try (H2Storage storage = H2Storage.open(options)) {
			AtomicLong seen = new AtomicLong();
			storage.scan(numberedKey(0), null)
				.limitRate(50)
				.doOnNext((e) -> seen.incrementAndGet())
				.then()
				.block(TIMEOUT);
			assertThat(seen).hasValue(keys);
			// Full pages, then the short (here empty) last page that ends the scan.
			assertThat(pages(storage)).isEqualTo(keys / pageSize + 1);
			assertThat(storage.stats().gauges()).containsEntry("pool.acquired", 0L);
		}
	}

	@Test
	void boundedScanStopsAtItsEndAcrossPages() {
		H2StorageOptions options = H2StorageOptions.defaults(this.dir).withScanPageSize(7);
		try (H2Storage storage = H2Storage.open(options)) {
			Flux.range(0, 100)
				.concatMap((i) -> storage.upsert(Entry.value(numberedKey(i), bytes("v"), 1)))
				.then()
				.block(TIMEOUT);
			StepVerifier.create(storage.scan(numberedKey(10), numberedKey(31)).map((e) -> new String(e.key())))
				.expectNextSequence(Flux.range(10, 21).map((i) -> new String(numberedKey(i))).toIterable())
				.expectComplete()
				.verify(TIMEOUT);
		}
	}

	@Test
	void exhaustedPoolIsAnOverloadNotAQueue() {
		H2StorageOptions options = H2StorageOptions.defaults(this.dir)
			.withPool(1, 1)
			.withPending(1, Duration.ofMillis(300));
		try (H2Storage storage = H2Storage.open(options)) {
			Connection held = storage.pool().create().block(TIMEOUT);
			assertThat(held).isNotNull();
			try {
				// The first caller waits (one waiter allowed) and times out; the second
				// is
				// refused at once.
				Mono<Entry> waiting = storage.get(bytes("k"));
				StepVerifier.create(waiting)
					.then(() -> assertThatThrownBy(() -> storage.get(bytes("k")).block(TIMEOUT))
						.isInstanceOf(StorageOverloadedException.class))
					.expectError(StorageOverloadedException.class)
					.verify(TIMEOUT);
				assertThatThrownBy(() -> storage.upsert(Entry.value(bytes("k"), bytes("v"), 1)).block(TIMEOUT))
					.isInstanceOf(StorageOverloadedException.class)
					.hasMessageContaining("pool");
				StorageStats stats = storage.stats();
				assertThat(stats.counters().get("overloads")).isGreaterThanOrEqualTo(3);
				assertThat(stats.gauges()).containsEntry("pool.acquired", 1L).containsEntry("pool.max", 1L);
			}
			finally {
				Mono.from(held.close()).block(TIMEOUT);
			}
			storage.upsert(Entry.value(bytes("k"), bytes("v"), 1)).block(TIMEOUT);
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).isEqualTo(Entry.value(bytes("k"), bytes("v"), 1));
		}
	}

	@ParameterizedTest
	@EnumSource(H2Durability.class)
	void everyDurabilityKeepsFlushedAndClosedWrites(H2Durability durability) {
		H2StorageOptions options = H2StorageOptions.defaults(this.dir)
			.withDurability(durability, Duration.ofMillis(20));
		try (H2Storage storage = H2Storage.open(options)) {
			storage.upsert(Entry.value(bytes("a"), bytes("1"), 1)).block(TIMEOUT);
			storage.flush().block(TIMEOUT);
			storage.upsert(Entry.tombstone(bytes("b"), 2)).block(TIMEOUT);
			storage.upsertAll(List.of(Entry.value(bytes("c"), bytes("3"), 3), Entry.tombstone(bytes("d"), 4)))
				.block(TIMEOUT);
		}
		try (H2Storage storage = H2Storage.open(options)) {
			assertThat(storage.get(bytes("a")).block(TIMEOUT)).isEqualTo(Entry.value(bytes("a"), bytes("1"), 1));
			assertThat(storage.get(bytes("b")).block(TIMEOUT)).isEqualTo(Entry.tombstone(bytes("b"), 2));
			assertThat(storage.get(bytes("c")).block(TIMEOUT)).isEqualTo(Entry.value(bytes("c"), bytes("3"), 3));
			assertThat(storage.get(bytes("d")).block(TIMEOUT)).isEqualTo(Entry.tombstone(bytes("d"), 4));
		}
	}

	@Test
	void periodicSyncRunsAfterWrites() throws InterruptedException {
		H2StorageOptions options = H2StorageOptions.defaults(this.dir)
			.withDurability(H2Durability.PERIODIC_SYNC, Duration.ofMillis(20));
		try (H2Storage storage = H2Storage.open(options)) {
			storage.upsert(Entry.value(bytes("a"), bytes("1"), 1)).block(TIMEOUT);
			long deadline = System.nanoTime() + TIMEOUT.toNanos();
			while (storage.stats().counters().get("syncs") == 0 && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
			assertThat(storage.stats().counters().get("syncs")).isPositive();
			assertThat(storage.stats().healthy()).isTrue();
		}
	}

	@Test
	void closeDuringBusyPeriodicSyncsAlwaysReleasesTheDatabase() {
		// Syncs every millisecond, so close() nearly always meets a running sync and
		// H2's background writer; a close that left the database "closing" would make
		// the next open wait for a minute.
		H2StorageOptions options = H2StorageOptions.defaults(this.dir)
			.withDurability(H2Durability.PERIODIC_SYNC, Duration.ofMillis(1));
		for (int round = 0; round < 30; round++) {
			long started = System.nanoTime();
			try (H2Storage storage = H2Storage.open(options)) {
				int r = round;
				Flux.range(0, 50)
					.flatMap((i) -> storage.upsert(Entry.value(numberedKey(i), bytes("r" + r), r)), 4)
					.then()
					.block(TIMEOUT);
			}
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("round %d", round)
				.isLessThan(Duration.ofSeconds(20));
		}
		try (H2Storage storage = H2Storage.open(options)) {
			assertThat(storage.get(numberedKey(49)).block(TIMEOUT))
				.isEqualTo(Entry.value(numberedKey(49), bytes("r29"), 29));
		}
	}

	@Test
	void cancellingFromAnotherThreadNeverBreaksTheDatabase() {
		// A cancel that interrupted the thread running H2 would close its FileChannel
		// (ClosedByInterruptException) and break the database for every later call.
		byte[] big = new byte[1 << 20];
		java.util.Random random = new java.util.Random(5);
		H2StorageOptions options = H2StorageOptions.defaults(this.dir)
			.withScanPageSize(10)
			.withDurability(H2Durability.SYNC_EACH_WRITE, Duration.ofMillis(100));
		try (H2Storage storage = H2Storage.open(options)) {
			for (int i = 0; i < 100; i++) {
				Disposable write = storage.upsert(Entry.value(numberedKey(i % 20), big, i)).subscribe();
				Disposable scan = storage.scan(numberedKey(0), null).subscribe();
				Disposable flush = storage.flush().subscribe();
				java.util.concurrent.locks.LockSupport.parkNanos(random.nextInt(3_000_000));
				write.dispose();
				scan.dispose();
				flush.dispose();
			}
			storage.upsert(Entry.value(bytes("after"), bytes("v"), 1)).block(TIMEOUT);
			assertThat(storage.get(bytes("after")).block(TIMEOUT))
				.isEqualTo(Entry.value(bytes("after"), bytes("v"), 1));
			storage.flush().block(TIMEOUT);
		}
		try (H2Storage storage = H2Storage.open(H2StorageOptions.defaults(this.dir))) {
			assertThat(storage.get(bytes("after")).block(TIMEOUT)).isNotNull();
		}
	}

	@Test
	void statsCountOperations() {
		try (H2Storage storage = H2Storage.open(H2StorageOptions.defaults(this.dir))) {
			storage.upsert(Entry.value(bytes("a"), bytes("1"), 1)).block(TIMEOUT);
			storage.get(bytes("a")).block(TIMEOUT);
			storage.scan(bytes("a"), null).blockLast(TIMEOUT);
			// A list counts its entries.
			storage.upsertAll(List.of(Entry.value(bytes("b"), bytes("2"), 1), Entry.tombstone(bytes("c"), 1)))
				.block(TIMEOUT);
			StorageStats stats = storage.stats();
			assertThat(stats.backend()).isEqualTo("h2");
			assertThat(stats.counters()).containsEntry("upserts", 3L)
				.containsEntry("gets", 1L)
				.containsEntry("scans", 1L)
				.containsEntry("scan.rows", 1L);
			assertThat(stats.gauges()).containsKeys("pool.acquired", "pool.idle", "pool.pending");
		}
	}

	@Test
	void databaseFileLivesInTheFolder() {
		try (H2Storage storage = H2Storage.open(H2StorageOptions.defaults(this.dir))) {
			storage.upsert(Entry.value(bytes("a"), bytes("1"), 1)).block(TIMEOUT);
		}
		assertThat(this.dir.resolve("quorumkv.mv.db")).exists();
	}

	@Test
	void tooLongKeyIsAStorageExceptionWithAClearMessage() {
		try (H2Storage storage = H2Storage.open(H2StorageOptions.defaults(this.dir))) {
			byte[] key = new byte[H2Schema.MAX_KEY_BYTES + 1];
			assertThatThrownBy(() -> storage.upsert(Entry.value(key, bytes("v"), 1)).block(TIMEOUT))
				.isInstanceOf(io.quorumkv.storage.StorageException.class)
				.hasMessageStartingWith("h2 upsert failed");
			// In a list, the whole list is rolled back: nothing of it is kept.
			assertThatThrownBy(() -> storage
				.upsertAll(List.of(Entry.value(bytes("first"), bytes("v"), 1), Entry.value(key, bytes("v"), 1)))
				.block(TIMEOUT)).isInstanceOf(io.quorumkv.storage.StorageException.class)
				.hasMessageStartingWith("h2 upsert failed");
			assertThat(storage.get(bytes("first")).block(TIMEOUT)).isNull();
		}
	}

	private static long pages(H2Storage storage) {
		return storage.stats().counters().get("scan.pages");
	}

}
