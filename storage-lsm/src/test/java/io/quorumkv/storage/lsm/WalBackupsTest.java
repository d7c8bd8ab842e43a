package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With incremental backups on, every WAL segment is linked into {@code backups/wal/} when
 * it is created, with a record naming the segment created before it, across flushes and
 * restarts; a flushed segment's link outlives the segment and holds every version written
 * to it, overwrites included, which {@link WalBackup#scan} reads with every record's
 * checksums. Off, nothing is linked.
 */
class WalBackupsTest {

	@TempDir
	Path dir;

	@Test
	void everySegmentIsLinkedChainedAndKeepsEveryVersion() throws Exception {
		Path data = this.dir.resolve("data");
		Path wal = data.resolve(IncrementalBackup.FOLDER).resolve(WalBackup.FOLDER);
		long base = System.currentTimeMillis() * 1_000;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withIncrementalBackups(true))) {
			// Each key three times into one memtable: its table keeps the last only.
			for (int round = 0; round < 3; round++) {
				write(storage, 0, 100, base + round * 1_000);
			}
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			write(storage, 0, 10, base + 10_000);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			List<WalBackup> records = WalBackup.list(wal);
			assertThat(records).hasSizeGreaterThanOrEqualTo(3);
			assertThat(storage.stats().counters()).containsEntry("backup.wal.links", (long) records.size())
				.containsEntry("backup.wal.failures", 0L);
			// The flushed segments are gone from the data folder; their links stay.
			assertThat(Files.exists(data.resolve(records.getFirst().segment()))).isFalse();
		}
		List<WalBackup> records = WalBackup.list(wal);
		assertChained(records);
		List<Long> counts = new ArrayList<>();
		for (WalBackup record : records) {
			counts.add(WalBackup.scan(wal.resolve(record.segment()), (e) -> {
			}).records());
		}
		// 300 versions of 100 keys, then 10; segments made ahead and never used are
		// empty.
		assertThat(counts.stream().filter((n) -> n > 0).toList()).containsExactly(300L, 10L);

		// A restart continues the chain from the newest record.
		long newest = records.getLast().number();
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withIncrementalBackups(true))) {
			write(storage, 0, 10, base + 20_000);
		}
		List<WalBackup> after = WalBackup.list(wal);
		assertChained(after);
		assertThat(after.stream().filter((r) -> r.number() > newest).findFirst().orElseThrow().previous())
			.isEqualTo(newest);
	}

	@Test
	void aDamagedRecordIsDamageAndATornTailIsReported() throws Exception {
		Path data = this.dir.resolve("data");
		Path wal = data.resolve(IncrementalBackup.FOLDER).resolve(WalBackup.FOLDER);
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withIncrementalBackups(true))) {
			write(storage, 0, 50, System.currentTimeMillis() * 1_000);
		}
		Path segment = null;
		for (WalBackup record : WalBackup.list(wal)) {
			if (Files.size(wal.resolve(record.segment())) > 0) {
				segment = wal.resolve(record.segment());
			}
		}
		byte[] bytes = Files.readAllBytes(segment);
		Path torn = this.dir.resolve("torn.log");
		Files.write(torn, java.util.Arrays.copyOf(bytes, bytes.length - 3));
		WalBackup.Scan scan = WalBackup.scan(torn, (e) -> {
		});
		assertThat(scan.tornTail()).isTrue();
		assertThat(scan.records()).isEqualTo(49);
		assertThat(Files.size(torn)).isEqualTo(bytes.length - 3);
		bytes[bytes.length / 2] ^= 0x01;
		Path flipped = this.dir.resolve("flipped.log");
		Files.write(flipped, bytes);
		assertThatThrownBy(() -> WalBackup.scan(flipped, (e) -> {
		})).isInstanceOf(CorruptedStorageException.class).hasMessageContaining(flipped.toString());
	}

	@Test
	void offNothingIsLinked() throws Exception {
		Path data = this.dir.resolve("data");
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data))) {
			write(storage, 0, 10, System.currentTimeMillis() * 1_000);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			assertThat(storage.stats().counters()).containsEntry("backup.wal.links", 0L);
		}
		assertThat(data.resolve(IncrementalBackup.FOLDER)).doesNotExist();
	}

	/** Every record names the one before it, the first none or an older segment. */
	private static void assertChained(List<WalBackup> records) {
		for (int i = 1; i < records.size(); i++) {
			assertThat(records.get(i).previous()).as(records.get(i).segment()).isEqualTo(records.get(i - 1).number());
		}
		assertThat(records.getFirst().previous()).isEqualTo(-1);
	}

	private static void write(LsmStorage storage, int from, int to, long time) {
		for (int i = from; i < to; i++) {
			storage.upsert(Entry.value(String.format("key%04d", i).getBytes(StandardCharsets.US_ASCII),
					("v" + time + "-" + i).getBytes(StandardCharsets.UTF_8), time + i))
				.block();
		}
	}

}
