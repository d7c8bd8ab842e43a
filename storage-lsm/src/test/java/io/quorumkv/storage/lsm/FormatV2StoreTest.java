package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data folder written in the formats of version 2 (the test resource {@code format-v2};
 * what it holds is {@link FormatV2Fixture}) opens with today's engine: tables of each
 * codec (none, LZ4, zstd) and the WAL read back entry by entry and by scan, expiries
 * included, and a full compaction rewrites them.
 */
class FormatV2StoreTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final List<String> FILES = List.of("000007.sst", "000007.sst.crc32c", "000011.sst",
			"000011.sst.crc32c", "000016.sst", "000016.sst.crc32c", "000021.sst", "000021.sst.crc32c", "MANIFEST",
			"wal-000020.log", "wal-000022.log");

	private final ManualClock clock = ManualClock.startingAt(Instant.parse("2031-01-01T00:00:00Z"));

	@TempDir
	Path dir;

	private void copyFixture() throws IOException {
		for (String name : FILES) {
			try (InputStream in = FormatV2StoreTest.class.getResourceAsStream("/format-v2/" + name)) {
				assertThat(in).as(name).isNotNull();
				Files.copy(in, this.dir.resolve(name));
			}
		}
	}

	private LsmStorage open(Compression codec) {
		// No compaction but the forced one: the tables of each codec are counted.
		return LsmStorage.open(LsmOptions.defaults(this.dir)
			.withCompression(codec)
			.withFsync(FsyncPolicy.NEVER)
			.withCompaction(100, 256L << 20, 10, 64L << 20), this.clock);
	}

	private static void assertHoldsTheFixture(LsmStorage storage, boolean compacted) {
		List<Entry> expected = new ArrayList<>();
		for (int i = 0; i < FormatV2Fixture.KEYS; i++) {
			Entry entry = FormatV2Fixture.expected(i, compacted);
			if (entry != null) {
				expected.add(entry);
			}
			assertThat(storage.get(FormatV2Fixture.key(i)).block(TIMEOUT)).as("key %d", i).isEqualTo(entry);
		}
		assertThat(storage.scan(bytes("v2-key-"), bytes("v2-key.")).collectList().block(TIMEOUT))
			.containsExactlyElementsOf(expected);
	}

	private static Map<String, Long> gauges(LsmStorage storage) {
		return storage.stats().gauges();
	}

	@Test
	void aVersion2StoreOfEveryCodecOpensAndCompacts() throws Exception {
		copyFixture();
		try (LsmStorage storage = open(Compression.LZ4)) {
			assertHoldsTheFixture(storage, false);
			// The replayed WAL is a frozen memtable until its background flush: wait for
			// it.
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			assertThat(gauges(storage))
				.as("the fixture's four tables, one written with each setting, and the replayed WAL's")
				.containsEntry("tables.format.1", 0L)
				.containsEntry("tables.format.2", 5L)
				.containsEntry("tables.codec.none", 1L)
				.containsEntry("tables.codec.zstd", 1L)
				.containsEntry("tables.codec.lz4", 3L);
		}
		try (LsmStorage storage = open(Compression.NONE)) {
			assertHoldsTheFixture(storage, false);
			storage.forceCompaction().get(30, TimeUnit.SECONDS);
			assertThat(gauges(storage)).as("rewritten with this session's setting")
				.containsEntry("tables.codec.lz4", 0L)
				.containsEntry("tables.codec.zstd", 0L);
			assertHoldsTheFixture(storage, true);
		}
		try (LsmStorage storage = open(Compression.LZ4)) {
			assertHoldsTheFixture(storage, true);
		}
	}

	@Test
	void theFixturesExpiriesAreRead() throws Exception {
		copyFixture();
		this.clock.set(Instant.parse("2100-01-01T00:00:01Z"));
		try (LsmStorage storage = open(Compression.LZ4)) {
			int expired = 0;
			for (int i = 0; i < FormatV2Fixture.KEYS; i++) {
				Entry written = FormatV2Fixture.expected(i, false);
				Entry read = storage.get(FormatV2Fixture.key(i)).block(TIMEOUT);
				if (written != null && written.expiresAt() == FormatV2Fixture.EXPIRES_AT) {
					expired++;
					assertThat(read).as("key %d, expired", i)
						.isEqualTo(Entry.tombstone(FormatV2Fixture.key(i), written.timestamp()));
				}
				else {
					assertThat(read).as("key %d", i).isEqualTo(written);
				}
			}
			assertThat(expired).as("expiring entries in the deepest table, in a level-0 one and in the WAL")
				.isEqualTo(90);
		}
	}

}
