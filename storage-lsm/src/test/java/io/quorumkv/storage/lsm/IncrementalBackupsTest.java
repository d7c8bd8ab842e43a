package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.io.ForwardingFileIo;
import io.quorumkv.storage.lsm.sstable.TableDigest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With incremental backups on, each flush links exactly its new table into
 * {@code backups/} with a record that checks it, chained to the flush before; a
 * compaction links nothing, and the linked files outlive the live ones it deletes. A link
 * that fails is counted and the store goes on, and the next record names the table it
 * missed. A record takes the table's checksum from the digest its writer left beside it
 * when the digest is of the table's length (the table is not read again), else sums the
 * table. Off, nothing is linked.
 */
class IncrementalBackupsTest {

	@TempDir
	Path dir;

	@Test
	void eachFlushLinksItsTableAndCompactionLinksNothing() throws Exception {
		Path data = this.dir.resolve("data");
		Path backups = data.resolve(IncrementalBackup.FOLDER);
		long base = System.currentTimeMillis() * 1_000;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withIncrementalBackups(true))) {
			write(storage, 0, 100, base);
			long beforeFirst = System.currentTimeMillis() * 1_000;
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			Set<String> first = tables(data);
			assertThat(first).hasSize(1);
			assertThat(files(backups)).containsExactlyInAnyOrder(only(first), only(first) + ".backup");
			IncrementalBackup firstRecord = IncrementalBackup.read(backups.resolve(only(first) + ".backup"));
			assertThat(firstRecord.previous()).isEqualTo(-1);
			assertThat(firstRecord.frozenAt()).isGreaterThanOrEqualTo(beforeFirst);
			assertThat(firstRecord.crc32c()).isEqualTo(IncrementalBackup.crc32c(backups.resolve(only(first))));

			write(storage, 50, 150, base + 1_000);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			Set<String> second = tables(data);
			second.removeAll(first);
			assertThat(second).hasSize(1);
			assertThat(files(backups)).containsExactlyInAnyOrder(only(first), only(first) + ".backup", only(second),
					only(second) + ".backup");
			IncrementalBackup secondRecord = IncrementalBackup.read(backups.resolve(only(second) + ".backup"));
			assertThat(secondRecord.previous()).isEqualTo(firstRecord.number());
			assertThat(secondRecord.frozenAt()).isGreaterThanOrEqualTo(firstRecord.frozenAt());

			storage.forceCompaction().get(30, TimeUnit.SECONDS);
			Set<String> compacted = tables(data);
			assertThat(compacted).isNotEmpty().doesNotContain(only(first), only(second));
			assertThat(files(backups)).containsExactlyInAnyOrder(only(first), only(first) + ".backup", only(second),
					only(second) + ".backup");
			assertThat(storage.stats().counters()).containsEntry("backup.links", 2L)
				.containsEntry("backup.failures", 0L);
		}
		// The links read back whole: 100 keys, then 100 of which 50 overwrite.
		for (String table : tablesIn(backups)) {
			IncrementalBackup record = IncrementalBackup.read(backups.resolve(table + ".backup"));
			assertThat(IncrementalBackup.crc32c(backups.resolve(table))).isEqualTo(record.crc32c());
		}
		try (LsmSnapshotReader reader = LsmSnapshotReader.openTables(backups, List.copyOf(tablesIn(backups)))) {
			List<Integer> counts = new ArrayList<>();
			for (Iterator<Entry> table : reader.tables()) {
				int n = 0;
				while (table.hasNext()) {
					table.next();
					n++;
				}
				counts.add(n);
			}
			assertThat(counts).containsExactly(100, 100);
		}
	}

	@Test
	void aFailedLinkIsCountedTheStoreGoesOnAndTheNextRecordShowsTheGap() throws Exception {
		Path data = this.dir.resolve("data");
		Path backups = data.resolve(IncrementalBackup.FOLDER);
		long base = System.currentTimeMillis() * 1_000;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withIncrementalBackups(true))) {
			write(storage, 0, 50, base);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			String first = only(tables(data));
			// backups/ replaced by a file: the next record cannot be written.
			// (with wal/, the segments' links)
			try (Stream<Path> entries = Files.list(backups)) {
				for (Path entry : entries.toList()) {
					Files.move(entry, this.dir.resolve(entry.getFileName()));
				}
			}
			Files.delete(backups);
			Files.createFile(backups);
			write(storage, 50, 100, base + 1_000);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			Set<String> missed = tables(data);
			missed.remove(first);
			assertThat(storage.stats().counters()).containsEntry("backup.failures", 1L);
			assertThat(storage.stats().failure()).isNull();
			Files.delete(backups);
			Files.createDirectory(backups);
			write(storage, 100, 150, base + 2_000);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			Set<String> third = tables(data);
			third.remove(first);
			third.removeAll(missed);
			IncrementalBackup record = IncrementalBackup.read(backups.resolve(only(third) + ".backup"));
			assertThat(record.previous()).isEqualTo(DataFiles.tableNumber(only(missed)));
			assertThat(storage.stats().counters()).containsEntry("backup.links", 2L);
		}
	}

	/**
	 * As the linker links a table into {@code backups/}, the table's digest is replaced
	 * by a well-formed one with another checksum ({@code forgedLength} -1: the table's
	 * own length): the record shows whether the linker took the digest or read the table.
	 */
	@Test
	void aRecordTakesTheChecksumFromTheTablesDigestUnlessItsLengthDiffers() throws Exception {
		Path data = this.dir.resolve("data");
		Path backups = data.resolve(IncrementalBackup.FOLDER);
		AtomicLong forgedLength = new AtomicLong(-1);
		FileIo io = new ForwardingFileIo(FileIo.real()) {

			@Override
			public void link(Path existing, Path link) throws IOException {
				String name = existing.getFileName().toString();
				if (name.endsWith(DataFiles.TABLE_SUFFIX) && link.startsWith(backups)) {
					long length = forgedLength.get() < 0 ? Files.size(existing) : forgedLength.get();
					new TableDigest(length, 0x5eed).write(FileIo.real(), TableDigest.of(existing));
				}
				super.link(existing, link);
			}

		};
		long base = System.currentTimeMillis() * 1_000;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data).withIncrementalBackups(true), io)) {
			write(storage, 0, 50, base);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			String first = only(tables(data));
			assertThat(IncrementalBackup.read(backups.resolve(first + IncrementalBackup.RECORD_SUFFIX)).crc32c())
				.isEqualTo(0x5eed);

			forgedLength.set(1);
			write(storage, 50, 100, base + 1_000);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			Set<String> second = tables(data);
			second.remove(first);
			String table = only(second);
			assertThat(IncrementalBackup.read(backups.resolve(table + IncrementalBackup.RECORD_SUFFIX)).crc32c())
				.isEqualTo(IncrementalBackup.crc32c(backups.resolve(table)))
				.isNotEqualTo(0x5eed);
			assertThat(storage.stats().counters()).containsEntry("backup.links", 2L);
		}
	}

	@Test
	void offNothingIsLinked() throws Exception {
		Path data = this.dir.resolve("data");
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(data))) {
			write(storage, 0, 100, System.currentTimeMillis() * 1_000);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			write(storage, 50, 150, System.currentTimeMillis() * 1_000);
			storage.forceFlush().get(30, TimeUnit.SECONDS);
			storage.forceCompaction().get(30, TimeUnit.SECONDS);
			assertThat(storage.stats().counters()).containsEntry("backup.links", 0L);
		}
		assertThat(data.resolve(IncrementalBackup.FOLDER)).doesNotExist();
	}

	private static void write(LsmStorage storage, int from, int to, long time) {
		for (int i = from; i < to; i++) {
			storage.upsert(Entry.value(String.format("key%04d", i).getBytes(StandardCharsets.US_ASCII),
					("v" + i).getBytes(StandardCharsets.UTF_8), time + i))
				.block();
		}
	}

	/** The only element of a set of one. */
	private static String only(Set<String> names) {
		assertThat(names).hasSize(1);
		return names.iterator().next();
	}

	private static Set<String> tables(Path data) throws Exception {
		return new TreeSet<>(tablesIn(data));
	}

	private static TreeSet<String> tablesIn(Path folder) throws Exception {
		TreeSet<String> names = new TreeSet<>();
		for (String name : files(folder)) {
			if (name.endsWith(DataFiles.TABLE_SUFFIX)) {
				names.add(name);
			}
		}
		return names;
	}

	private static List<String> files(Path folder) throws Exception {
		try (Stream<Path> files = Files.list(folder)) {
			return files.filter(Files::isRegularFile).map((p) -> p.getFileName().toString()).toList();
		}
	}

}
