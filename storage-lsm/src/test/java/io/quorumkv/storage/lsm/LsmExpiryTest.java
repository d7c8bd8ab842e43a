package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.bytes;
import static io.quorumkv.storage.contract.Entries.put;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Expiry;
import io.quorumkv.storage.contract.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Expiry inside the engine, on a clock the tests move: what the contract kit cannot see
 * (compaction turning expired values into tombstones and purging them, the manifest's
 * expiry watermark across a restart).
 */
class LsmExpiryTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final ManualClock clock = ManualClock.startingAt(Instant.parse("2031-03-04T05:06:07Z"));

	@TempDir
	Path dir;

	private LsmOptions options(Duration grace) {
		return LsmOptions.defaults(this.dir)
			.withMemtableSize(16 << 10)
			.withFsync(FsyncPolicy.NEVER)
			.withTombstoneGracePeriod(grace);
	}

	private static void await(CompletableFuture<Void> future) throws Exception {
		future.get(30, TimeUnit.SECONDS);
	}

	/**
	 * Flushes a table spanning every key the tests use, so that a compaction merges
	 * tables (one table alone would only move down a level).
	 */
	private void flushSpanningTable(LsmStorage storage) throws Exception {
		long now = this.clock.micros();
		storage.upsertAll(List.of(put("a-first", "x", now), put("z-last", "x", now))).block(TIMEOUT);
		await(storage.forceFlush());
	}

	private Entry lease(String key, long ttlSeconds) {
		long now = this.clock.micros();
		return Entry.expiring(bytes(key), bytes("v-" + key), now, Expiry.after(now, ttlSeconds));
	}

	@Test
	void anExpiredValueReadsAsTheTombstoneOfItsTimestampFromMemtableAndTables() throws Exception {
		try (LsmStorage storage = LsmStorage.open(options(Duration.ofDays(10)), this.clock)) {
			Entry flushed = lease("flushed", 60);
			storage.upsert(flushed).block(TIMEOUT);
			await(storage.forceFlush());
			Entry inMemory = lease("memory", 60);
			storage.upsert(inMemory).block(TIMEOUT);
			assertThat(storage.get(bytes("flushed")).block(TIMEOUT)).isEqualTo(flushed);
			assertThat(storage.scan(bytes("a"), null).collectList().block(TIMEOUT)).containsExactly(flushed, inMemory);
			this.clock.advance(Duration.ofSeconds(60));
			assertThat(storage.get(bytes("flushed")).block(TIMEOUT))
				.isEqualTo(Entry.tombstone(bytes("flushed"), flushed.timestamp()));
			assertThat(storage.get(bytes("memory")).block(TIMEOUT))
				.isEqualTo(Entry.tombstone(bytes("memory"), inMemory.timestamp()));
			assertThat(storage.scan(bytes("a"), null).collectList().block(TIMEOUT)).containsExactly(
					Entry.tombstone(bytes("flushed"), flushed.timestamp()),
					Entry.tombstone(bytes("memory"), inMemory.timestamp()));
		}
	}

	@Test
	void compactionTurnsExpiredValuesIntoTombstonesAndKeepsThemWithinTheGrace() throws Exception {
		try (LsmStorage storage = LsmStorage.open(options(Duration.ofDays(10)), this.clock)) {
			Entry expiring = lease("k", 5);
			storage.upsert(expiring).block(TIMEOUT);
			storage.upsert(put("other", "v", this.clock.micros())).block(TIMEOUT);
			await(storage.forceFlush());
			flushSpanningTable(storage);
			this.clock.advance(Duration.ofSeconds(5));
			await(storage.forceCompaction());
			assertThat(storage.stats().counters()).containsEntry("compaction.expired", 1L)
				.containsEntry("compaction.tombstones.purged", 0L);
			// Stored as a tombstone now: a clock set back does not bring the value back.
			this.clock.advance(Duration.ofSeconds(-10));
			assertThat(storage.get(bytes("k")).block(TIMEOUT))
				.isEqualTo(Entry.tombstone(bytes("k"), expiring.timestamp()));
			// It still shadows an older write, as any tombstone does.
			storage.upsert(Entry.value(bytes("k"), bytes("older"), expiring.timestamp() - 1)).block(TIMEOUT);
			assertThat(storage.get(bytes("k")).block(TIMEOUT))
				.isEqualTo(Entry.tombstone(bytes("k"), expiring.timestamp()));
		}
	}

	@Test
	void anExpiredValuePastTheGraceIsPurgedLikeATombstone() throws Exception {
		try (LsmStorage storage = LsmStorage.open(options(Duration.ofSeconds(30)), this.clock)) {
			Entry expiring = lease("k", 5);
			storage.upsert(expiring).block(TIMEOUT);
			storage.upsert(put("other", "v", this.clock.micros())).block(TIMEOUT);
			await(storage.forceFlush());
			// Expired, but its write is not yet older than the grace: kept as a
			// tombstone.
			this.clock.advance(Duration.ofSeconds(10));
			await(storage.forceCompaction());
			assertThat(storage.stats().counters()).containsEntry("compaction.tombstones.purged", 0L);
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).isNotNull();
			this.clock.advance(Duration.ofSeconds(30));
			storage.upsert(put("third", "v", this.clock.micros())).block(TIMEOUT);
			await(storage.forceFlush());
			await(storage.forceCompaction());
			assertThat(storage.stats().counters()).containsEntry("compaction.tombstones.purged", 1L);
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).isNull();
			assertThat(storage.get(bytes("other")).block(TIMEOUT)).isNotNull();
		}
	}

	@Test
	void anExpiredValueShadowingAnOlderVersionOutsideTheCompactionIsKept() throws Exception {
		try (LsmStorage storage = LsmStorage.open(options(Duration.ZERO), this.clock)) {
			Entry expiring = lease("k", 1);
			storage.upsert(expiring).block(TIMEOUT);
			await(storage.forceFlush());
			flushSpanningTable(storage);
			this.clock.advance(Duration.ofSeconds(2));
			// An older version lands in the memtable, outside the compaction.
			storage.upsert(Entry.value(bytes("k"), bytes("late"), expiring.timestamp() - 1)).block(TIMEOUT);
			await(storage.forceCompaction());
			assertThat(storage.stats().counters()).containsEntry("compaction.expired", 1L)
				.containsEntry("compaction.tombstones.purged", 0L);
			assertThat(storage.get(bytes("k")).block(TIMEOUT))
				.isEqualTo(Entry.tombstone(bytes("k"), expiring.timestamp()));
		}
	}

	@Test
	void aClockSetBackAcrossARestartDoesNotBringExpiredEntriesBack() throws Exception {
		Entry expiring = lease("k", 60);
		try (LsmStorage storage = LsmStorage.open(options(Duration.ofDays(10)), this.clock)) {
			storage.upsert(expiring).block(TIMEOUT);
			this.clock.advance(Duration.ofSeconds(61));
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).matches(Entry::isTombstone);
		}
		// The close wrote the manifest with the instant of the close.
		this.clock.advance(Duration.ofSeconds(-30));
		try (LsmStorage storage = LsmStorage.open(options(Duration.ofDays(10)), this.clock)) {
			assertThat(storage.get(bytes("k")).block(TIMEOUT))
				.isEqualTo(Entry.tombstone(bytes("k"), expiring.timestamp()));
			Entry other = lease("fresh", 40);
			storage.upsert(other).block(TIMEOUT);
			// Judged by the watermark (61 s after the first write), not by the clock.
			assertThat(storage.get(bytes("fresh")).block(TIMEOUT)).isEqualTo(other);
			this.clock.advance(Duration.ofSeconds(41));
			assertThat(storage.get(bytes("fresh")).block(TIMEOUT)).matches(Entry::isTombstone);
		}
	}

	@Test
	void expiriesSurviveFlushCompactionAndReopen() throws Exception {
		List<Entry> leases = List.of(lease("a", 100), lease("b", 200), lease("c", 300));
		try (LsmStorage storage = LsmStorage.open(options(Duration.ofDays(10)), this.clock)) {
			storage.upsertAll(leases.subList(0, 2)).block(TIMEOUT);
			await(storage.forceFlush());
			await(storage.forceCompaction());
			storage.upsert(leases.get(2)).block(TIMEOUT);
		}
		try (LsmStorage storage = LsmStorage.open(options(Duration.ofDays(10)), this.clock)) {
			assertThat(storage.scan(bytes("a"), null).collectList().block(TIMEOUT)).containsExactlyElementsOf(leases);
			this.clock.advance(Duration.ofSeconds(200));
			assertThat(storage.scan(bytes("a"), null).collectList().block(TIMEOUT)).extracting(Entry::isTombstone)
				.containsExactly(true, true, false);
		}
	}

}
