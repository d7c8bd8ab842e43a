package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.bytes;
import static io.quorumkv.storage.contract.Entries.numberedKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.wal.WalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Damaged files are reported with file and offset, never answered with wrong data. */
class CorruptionTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final int COUNT = 500;

	@TempDir
	Path dir;

	private LsmOptions options(Path dir) {
		return LsmOptions.defaults(dir).withFsync(FsyncPolicy.NEVER);
	}

	private static Entry entry(int i) {
		return Entry.value(numberedKey(i), bytes("value-" + i), 100 + i);
	}

	private static List<Path> files(Path dir, String suffix) throws IOException {
		try (Stream<Path> files = Files.list(dir)) {
			return files.filter((p) -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
		}
	}

	private static void flipByte(Path file, long offset) throws IOException {
		try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
			raf.seek(offset);
			int b = raf.read();
			raf.seek(offset);
			raf.write(b ^ 0x01);
		}
	}

	@Test
	void flippedByteInAnSsTableDataBlockFailsReadsNamingFileAndOffset() throws IOException {
		try (LsmStorage storage = LsmStorage.open(options(this.dir))) {
			for (int i = 0; i < COUNT; i++) {
				storage.upsert(entry(i)).block(TIMEOUT);
			}
		}
		Path table = files(this.dir, ".sst").getFirst();
		flipByte(table, 10); // inside the first data block, which starts at offset 0
		try (LsmStorage storage = LsmStorage.open(options(this.dir))) {
			assertThatThrownBy(() -> storage.get(numberedKey(0)).block(TIMEOUT))
				.isInstanceOfSatisfying(CorruptedStorageException.class, (ex) -> {
					assertThat(ex.file()).isEqualTo(table);
					assertThat(ex.offset()).isZero();
					assertThat(ex.getMessage()).contains("data block").contains("checksum");
				});
			assertThatThrownBy(() -> storage.scan(numberedKey(0), null).collectList().block(TIMEOUT))
				.isInstanceOf(CorruptedStorageException.class);
			// Other blocks still answer.
			assertThat(storage.get(numberedKey(COUNT - 1)).block(TIMEOUT)).isEqualTo(entry(COUNT - 1));
		}
	}

	/** Copies the folder of an open store after a flush(): what a crash would leave. */
	private Path crashedCopy() throws IOException {
		Path copy = this.dir.resolve("crashed");
		Path live = this.dir.resolve("live");
		try (LsmStorage storage = LsmStorage.open(options(live))) {
			for (int i = 0; i < COUNT; i++) {
				storage.upsert(entry(i)).block(TIMEOUT);
			}
			storage.flush().block(TIMEOUT);
			Files.createDirectories(copy);
			try (Stream<Path> files = Files.list(live)) {
				for (Path f : files.toList()) {
					Files.copy(f, copy.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
				}
			}
		}
		return copy;
	}

	@Test
	void flippedByteInTheMiddleOfTheWalFailsOpenNamingFileAndOffset() throws IOException {
		Path copy = crashedCopy();
		Path wal = files(copy, ".log").getFirst();
		long recordStart = 0;
		for (int i = 0; i < 100; i++) {
			recordStart += WalRecord.encode(entry(i)).length;
		}
		long damagedRecord = recordStart;
		long offset = recordStart + WalRecord.HEADER_SIZE + 2;
		flipByte(wal, offset);
		assertThatThrownBy(() -> LsmStorage.open(options(copy))).isInstanceOfSatisfying(CorruptedStorageException.class,
				(ex) -> {
					assertThat(ex.file()).isEqualTo(wal);
					assertThat(ex.offset()).isEqualTo(damagedRecord);
				});
	}

	@Test
	void tornWalTailLosesOnlyTheTornRecord() throws IOException {
		Path copy = crashedCopy();
		Path wal = files(copy, ".log").getFirst();
		try (RandomAccessFile raf = new RandomAccessFile(wal.toFile(), "rw")) {
			raf.setLength(raf.length() - 3);
		}
		try (LsmStorage storage = LsmStorage.open(options(copy))) {
			for (int i = 0; i < COUNT - 1; i++) {
				assertThat(storage.get(numberedKey(i)).block(TIMEOUT)).isEqualTo(entry(i));
			}
			assertThat(storage.get(numberedKey(COUNT - 1)).block(TIMEOUT)).isNull();
		}
	}

	@Test
	void orphanTablesAndTempFilesAreDeletedOnOpen() throws IOException {
		Path copy = crashedCopy();
		Files.write(copy.resolve("000999.sst"), new byte[100]);
		Files.write(copy.resolve("001000.sst.tmp"), new byte[100]);
		// A table's digest written before a crash took its table.
		Files.write(copy.resolve("001000.sst.crc32c"), new byte[20]);
		try (LsmStorage storage = LsmStorage.open(options(copy))) {
			assertThat(storage.get(numberedKey(7)).block(TIMEOUT)).isEqualTo(entry(7));
		}
		assertThat(copy.resolve("000999.sst")).doesNotExist();
		assertThat(copy.resolve("001000.sst.tmp")).doesNotExist();
		assertThat(copy.resolve("001000.sst.crc32c")).doesNotExist();
	}

}
