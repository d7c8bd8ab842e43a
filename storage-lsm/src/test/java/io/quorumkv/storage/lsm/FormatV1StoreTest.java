package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Expiry;
import io.quorumkv.storage.contract.ManualClock;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data folder written in the formats of version 1 (WAL, tables, manifest; the test
 * resource {@code format-v1}, described in its README) opens with today's engine: every
 * entry reads back, new tables are written beside the old ones in the current format, a
 * reopen reads the mixed set, and a full compaction rewrites it.
 */
class FormatV1StoreTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final List<String> FILES = List.of("000042.sst", "000051.sst", "000052.sst", "000053.sst",
			"MANIFEST", "wal-000049.log", "wal-000050.log");

	private final ManualClock clock = ManualClock.startingAt(Instant.parse("2031-01-01T00:00:00Z"));

	@TempDir
	Path dir;

	static void copyFixture(Path dir) throws IOException {
		Files.createDirectories(dir);
		for (String name : FILES) {
			try (InputStream in = FormatV1StoreTest.class.getResourceAsStream("/format-v1/" + name)) {
				assertThat(in).as(name).isNotNull();
				Files.copy(in, dir.resolve(name));
			}
		}
	}

	/**
	 * What the fixture holds: key {@code i} as its README describes it; null for the
	 * tombstones its full compaction purged, and after a full compaction here
	 * ({@code compacted}) for every tombstone (all far older than the grace period).
	 */
	static @Nullable Entry expected(int i, boolean compacted) {
		byte[] key = bytes(String.format("v1-key-%04d", i));
		long ts = 1_000 + i;
		if (i < 400) {
			return (i % 7 == 3) ? null : Entry.value(key, bytes("value-" + i + "-" + "x".repeat(i % 50)), ts);
		}
		if (i < 520 || i % 2 == 0) {
			return Entry.value(key, bytes("value-" + i), ts);
		}
		return compacted ? null : Entry.tombstone(key, ts);
	}

	private LsmStorage open() {
		// No compaction but the forced one: the tables of each format are counted.
		return LsmStorage.open(LsmOptions.defaults(this.dir)
			.withCompression(Compression.LZ4)
			.withFsync(FsyncPolicy.NEVER)
			.withCompaction(100, 256L << 20, 10, 64L << 20), this.clock);
	}

	private static void assertHoldsTheFixture(LsmStorage storage, boolean compacted) {
		List<Entry> expected = new ArrayList<>();
		for (int i = 0; i < 540; i++) {
			Entry entry = expected(i, compacted);
			if (entry != null) {
				expected.add(entry);
			}
			assertThat(storage.get(bytes(String.format("v1-key-%04d", i))).block(TIMEOUT)).as("key %d", i)
				.isEqualTo(entry);
		}
		assertThat(storage.scan(bytes("v1-key-"), bytes("v1-key.")).collectList().block(TIMEOUT))
			.containsExactlyElementsOf(expected);
	}

	/** The number of live tables of each format version, [version 1, version 2]. */
	private static List<Long> tableVersions(LsmStorage storage) {
		return List.of(storage.stats().gauges().get("tables.format.1"),
				storage.stats().gauges().get("tables.format.2"));
	}

	@Test
	void aVersion1StoreOpensAndItsTablesMixWithNewOnes() throws Exception {
		copyFixture(this.dir);
		List<Entry> added = new ArrayList<>();
		try (LsmStorage storage = open()) {
			assertHoldsTheFixture(storage, false);
			// The replayed WAL is a frozen memtable until its background flush: wait for
			// it.
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			assertThat(tableVersions(storage))
				.as("the fixture's four tables in version 1, the replayed WAL's in version 2")
				.containsExactly(4L, 1L);
			long now = this.clock.micros();
			for (int i = 0; i < 50; i++) {
				Entry entry = (i % 2 == 0)
						? Entry.expiring(bytes(String.format("new-%02d", i)), bytes("n" + i), now + i,
								Expiry.after(now, 3_600))
						: Entry.value(bytes(String.format("new-%02d", i)), bytes("n" + i), now + i);
				added.add(entry);
				storage.upsert(entry).block(TIMEOUT);
			}
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			assertThat(tableVersions(storage)).containsExactly(4L, 2L);
			assertThat(storage.stats().gauges()).as("uncompressed version-1 tables beside LZ4 tables (the setting)")
				.containsEntry("tables.codec.none", 4L)
				.containsEntry("tables.codec.lz4", 2L);
		}
		assertThat(ByteBuffer.wrap(Files.readAllBytes(this.dir.resolve("MANIFEST"))).getInt(4))
			.as("the manifest is rewritten in version 2")
			.isEqualTo(2);
		try (LsmStorage storage = open()) {
			assertThat(tableVersions(storage)).containsExactly(4L, 2L);
			assertHoldsTheFixture(storage, false);
			assertThat(storage.scan(bytes("new-"), bytes("new.")).collectList().block(TIMEOUT))
				.containsExactlyElementsOf(added);
			storage.forceCompaction().get(30, TimeUnit.SECONDS);
			assertThat(tableVersions(storage).get(0)).isZero();
			assertHoldsTheFixture(storage, true);
		}
		try (LsmStorage storage = open()) {
			assertHoldsTheFixture(storage, true);
			assertThat(storage.scan(bytes("new-"), bytes("new.")).collectList().block(TIMEOUT))
				.containsExactlyElementsOf(added);
		}
	}

}
