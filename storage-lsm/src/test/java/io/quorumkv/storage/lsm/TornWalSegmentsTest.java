package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.numberedKey;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.wal.WalReader;
import io.quorumkv.storage.lsm.wal.WalRecord;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery replays every live WAL segment, and a power loss can tear the tail of each of
 * them (the frozen memtables' segments as well as the active one): a crash image with
 * three live segments is torn in each segment at every offset of its last record, with
 * and without zeros after it, and in all three at once; recovery must keep every other
 * record and drop only the torn ones.
 */
@ExtendWith(Seeds.class)
class TornWalSegmentsTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path root;

	private Path image;

	/** Each live segment's records, oldest segment first. */
	private final List<List<Entry>> segments = new ArrayList<>();

	private final List<Path> segmentFiles = new ArrayList<>();

	private static LsmOptions options(Path dir) {
		return PowerLossRun.options(dir, FsyncPolicy.NEVER).withMaxImmutableMemtables(3);
	}

	/**
	 * Writes until two memtables are frozen with their flushes held up, then takes a
	 * process-crash image: three live segments, all holding records.
	 */
	@BeforeEach
	void threeLiveSegments() throws Exception {
		Path dir = this.root.resolve("live");
		CountDownLatch release = new CountDownLatch(1);
		FaultFileIo io = new FaultFileIo(dir, 1).holdingTableWrites(release);
		LsmStorage storage = LsmStorage.open(options(dir), io);
		try {
			for (int i = 0; i < 400 && storage.stats().gauges().get("memtables.immutable") < 2; i++) {
				storage.upsert(entry(i)).block(TIMEOUT);
			}
			for (int i = 400; i < 410; i++) {
				storage.upsert(entry(i)).block(TIMEOUT);
			}
			this.image = io.powerLoss(Tear.KEEP_WRITTEN, this.root.resolve("image")).folder();
		}
		finally {
			release.countDown();
			storage.close();
		}
		try (Stream<Path> files = Files.list(this.image)) {
			for (Path wal : files.filter((p) -> p.getFileName().toString().startsWith("wal-")).sorted().toList()) {
				List<Entry> records = new ArrayList<>();
				WalReader.replay(FileIo.real(), wal, records::add);
				if (!records.isEmpty()) {
					this.segments.add(records);
					this.segmentFiles.add(wal);
				}
			}
		}
		assertThat(this.segments).as("live segments holding records").hasSize(3);
	}

	private static Entry entry(int i) {
		return Entry.value(numberedKey(i), ("v" + i).getBytes(), 1_000 + i);
	}

	@Test
	void aTornTailInAnySegmentLosesOnlyItsTornRecord() throws IOException {
		int opens = 0;
		for (int s = 0; s < this.segments.size(); s++) {
			Entry last = this.segments.get(s).getLast();
			long size = Files.size(this.segmentFiles.get(s));
			int recordLength = WalRecord.encodedSize(last);
			for (long cut = size - recordLength; cut < size; cut++) {
				for (int zeros : new int[] { 0, 40 }) {
					Path copy = copyOfImage("seg" + s + "-" + cut + "-" + zeros);
					tear(copy.resolve(this.segmentFiles.get(s).getFileName()), cut, zeros);
					assertRecoveredAllBut(copy, List.of(last),
							"segment " + s + " cut at " + cut + ", " + zeros + " zeros");
					opens++;
				}
			}
		}
		assertThat(opens).isGreaterThan(3 * 20);
	}

	@Test
	void tornTailsInEverySegmentAtOnceLoseOnlyTheTornRecords(Random random) throws IOException {
		for (int round = 0; round < 20; round++) {
			Path copy = copyOfImage("all-" + round);
			List<Entry> torn = new ArrayList<>();
			for (int s = 0; s < this.segments.size(); s++) {
				Entry last = this.segments.get(s).getLast();
				long size = Files.size(this.segmentFiles.get(s));
				long cut = size - 1 - random.nextInt(WalRecord.encodedSize(last));
				tear(copy.resolve(this.segmentFiles.get(s).getFileName()), cut, random.nextInt(2) * 64);
				torn.add(last);
			}
			assertRecoveredAllBut(copy, torn, "round " + round);
		}
	}

	private Path copyOfImage(String name) throws IOException {
		Path copy = this.root.resolve("copies").resolve(name);
		Files.createDirectories(copy);
		try (Stream<Path> files = Files.list(this.image)) {
			for (Path f : files.filter(Files::isRegularFile).toList()) {
				Files.copy(f, copy.resolve(f.getFileName()));
			}
		}
		return copy;
	}

	private static void tear(Path file, long cut, int zeros) throws IOException {
		try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
			raf.setLength(cut);
			raf.setLength(cut + zeros);
		}
	}

	private void assertRecoveredAllBut(Path dir, List<Entry> torn, String what) {
		try (LsmStorage storage = LsmStorage.open(options(dir))) {
			for (List<Entry> segment : this.segments) {
				for (Entry e : segment) {
					Entry expected = torn.contains(e) ? null : e;
					assertThat(storage.get(e.key()).block(TIMEOUT)).as("%s: %s", what, e).isEqualTo(expected);
				}
			}
		}
		try (Stream<Path> files = Files.list(dir)) {
			assertThat(files.map((p) -> p.getFileName().toString()).toList()).as(what)
				.noneMatch((n) -> n.endsWith(".tmp"));
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

}
