package io.quorumkv.service.paxos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;

import io.quorumkv.service.paxos.AcceptorTable.Row;
import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;

/**
 * The acceptor table on disk: what an acceptor promised and accepted survives a restart,
 * so a restarted acceptor never promises below a ballot it promised; a damaged file is
 * reported, never read as an empty table; the table is bounded.
 */
class AcceptorTableTest {

	private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);

	@TempDir
	Path folder;

	private AcceptorTable open() throws IOException {
		return AcceptorTable.open(this.folder.resolve("paxos-acceptor"), 10, 64 * 1024, 1024, 4096);
	}

	/**
	 * A table of up to 1,000 rows whose log is written into it past {@code compactAt}.
	 */
	private AcceptorTable open(long compactAt) throws IOException {
		return AcceptorTable.open(this.folder.resolve("paxos-acceptor"), 1_000, 1024 * 1024, 1024, 4096, compactAt);
	}

	private static byte[] key(int i) {
		return ("key-" + i).getBytes(StandardCharsets.UTF_8);
	}

	private static Row promised(long micros) {
		return new Row(new Ballot(micros, "a"), null, Ballot.NONE, 0);
	}

	private static Acceptor acceptor(AcceptorTable table) {
		return new Acceptor(table, (key) -> Mono.empty(), (micros) -> true, () -> 0L, 1 << 20);
	}

	@Test
	void aRestartedAcceptorKeepsItsPromiseAndWhatItAccepted() throws IOException {
		Entry value = Entry.value(KEY, "v".getBytes(StandardCharsets.UTF_8), 20);
		try (AcceptorTable table = open()) {
			Acceptor acceptor = acceptor(table);
			assertThat(acceptor.prepare(new Ballot(20, "a"), KEY).block().ok()).isTrue();
			assertThat(acceptor.propose(new Proposal(new Ballot(20, "a"), value)).block().ok()).isTrue();
			assertThat(acceptor.prepare(new Ballot(30, "b"), KEY).block().ok()).isTrue();
		}
		try (AcceptorTable table = open()) {
			Acceptor acceptor = acceptor(table);
			Messages.Promise below = acceptor.prepare(new Ballot(25, "c"), KEY).block();
			assertThat(below.ok()).isFalse();
			assertThat(below.promised()).isEqualTo(new Ballot(30, "b"));
			assertThat(acceptor.propose(new Proposal(new Ballot(20, "a"), value)).block().ok()).isFalse();
			Messages.Promise above = acceptor.prepare(new Ballot(31, "c"), KEY).block();
			assertThat(above.ok()).isTrue();
			assertThat(above.accepted()).isEqualTo(new Proposal(new Ballot(20, "a"), value));
		}
	}

	@Test
	void aPurgedRowsFloorSurvivesARestart() throws IOException {
		try (AcceptorTable table = open()) {
			table.sync(table.put(KEY, new Row(new Ballot(40, "a"), null, Ballot.NONE, 0))).block();
			assertThat(table.purge(ByteBuffer.wrap(KEY), table.row(KEY))).isTrue();
			table.sync(table.generation()).block();
		}
		try (AcceptorTable table = open()) {
			assertThat(table.row(KEY)).isNull();
			assertThat(table.floor()).isEqualTo(new Ballot(40, "a"));
			assertThat(acceptor(table).prepare(new Ballot(39, "z"), KEY).block().ok()).isFalse();
		}
	}

	@Test
	void aRowsCommitSurvivesARestart() throws IOException {
		try (AcceptorTable table = open()) {
			table.sync(table.put(KEY, new Row(new Ballot(40, "a"), null, new Ballot(35, "b"), 0))).block();
		}
		try (AcceptorTable table = open()) {
			assertThat(table.row(KEY)).isEqualTo(new Row(new Ballot(40, "a"), null, new Ballot(35, "b"), 0));
		}
	}

	/**
	 * A table of version 1 (before commits were recorded; the fixture was written by that
	 * code) is read with the floor as each row's commit, and written back as the current
	 * version when the table is next written whole (with a threshold of 0: once its log
	 * has grown past it).
	 */
	@Test
	void aTableOfTheFormatBeforeIsReadWithItsFloorAsEachRowsCommit() throws IOException {
		Path file = this.folder.resolve("paxos-acceptor");
		try (InputStream fixture = getClass().getResourceAsStream("acceptor-table-v1")) {
			Files.copy(fixture, file);
		}
		assertThat(ByteBuffer.wrap(Files.readAllBytes(file), 4, 4).getInt()).isEqualTo(1);
		Ballot floor = new Ballot(50, "n1");
		byte[] a = "a".getBytes(StandardCharsets.UTF_8);
		byte[] b = "b".getBytes(StandardCharsets.UTF_8);
		Row rowA = new Row(new Ballot(70, "n2"),
				new Proposal(new Ballot(60, "n0"), Entry.value(a, "va".getBytes(StandardCharsets.UTF_8), 60)), floor,
				2_000);
		Row rowB = new Row(new Ballot(80, "n1"), null, floor, 3_000);
		try (AcceptorTable table = open(0)) {
			assertThat(table.floor()).isEqualTo(floor);
			assertThat(table.size()).isEqualTo(2);
			assertThat(table.row(a)).isEqualTo(rowA);
			assertThat(table.row(b)).isEqualTo(rowB);
			for (int i = 0; i < 100 && ByteBuffer.wrap(Files.readAllBytes(file), 4, 4).getInt() == 1; i++) {
				table.sync(table.put(KEY, new Row(new Ballot(90 + i, "n0"), null, floor, 4_000))).block();
			}
		}
		assertThat(ByteBuffer.wrap(Files.readAllBytes(file), 4, 4).getInt()).isEqualTo(AcceptorTableFormat.VERSION);
		try (AcceptorTable table = open()) {
			assertThat(table.floor()).isEqualTo(floor);
			assertThat(table.row(a)).isEqualTo(rowA);
			assertThat(table.row(b)).isEqualTo(rowB);
			assertThat(table.size()).isEqualTo(3);
		}
	}

	@Test
	void aDamagedTableIsReportedNotReadAsEmpty() throws IOException {
		try (AcceptorTable table = open(0)) {
			table.sync(table.put(KEY, new Row(new Ballot(40, "a"), null, Ballot.NONE, 0))).block();
		}
		Path file = this.folder.resolve("paxos-acceptor");
		byte[] bytes = Files.readAllBytes(file);
		bytes[bytes.length / 2] ^= 0x10;
		Files.write(file, bytes);
		assertThatThrownBy(this::open).isInstanceOf(CorruptedStorageException.class);
	}

	/**
	 * A change is appended to the table's log and forced; the table itself (its file, the
	 * same inode) is not rewritten for it, however many rows it holds.
	 */
	@Test
	void aChangeIsAppendedNotWrittenWithTheWholeTable() throws IOException {
		Path file = this.folder.resolve("paxos-acceptor");
		try (AcceptorTable table = open(1024 * 1024)) {
			for (int i = 0; i < 500; i++) {
				table.put(key(i), promised(10 + i));
			}
			table.sync(table.generation()).block();
			Object before = Files.exists(file) ? Files.readAttributes(file, BasicFileAttributes.class).fileKey() : null;
			byte[] content = Files.exists(file) ? Files.readAllBytes(file) : null;
			for (int i = 0; i < 20; i++) {
				table.sync(table.put(key(i), promised(1_000 + i))).block();
			}
			Object after = Files.exists(file) ? Files.readAttributes(file, BasicFileAttributes.class).fileKey() : null;
			assertThat(after).as("the table's file").isEqualTo(before);
			assertThat(Files.exists(file) ? Files.readAllBytes(file) : null).as("the table's content")
				.isEqualTo(content);
		}
		try (AcceptorTable table = open(1024 * 1024)) {
			assertThat(table.size()).isEqualTo(500);
			for (int i = 0; i < 500; i++) {
				assertThat(table.row(key(i))).as("row %d", i).isEqualTo(promised((i < 20) ? 1_000 + i : 10 + i));
			}
		}
	}

	/**
	 * Past the threshold the log is written into the table and starts again empty; a
	 * restart reads the table and what the log holds after it, purges and the floor
	 * included.
	 */
	@Test
	void theLogIsWrittenIntoTheTableAndARestartReadsBoth() throws IOException {
		Path log = this.folder.resolve("paxos-acceptor.log");
		long longest = 0;
		try (AcceptorTable table = open(4096)) {
			for (int i = 0; i < 300; i++) {
				table.sync(table.put(key(i % 50), promised(100 + i))).block();
				longest = Math.max(longest, Files.size(log));
			}
			assertThat(table.purge(ByteBuffer.wrap(key(7)), table.row(key(7)))).isTrue();
			table.sync(table.generation()).block();
		}
		assertThat(longest).as("the log's longest").isLessThan(2 * 4096);
		try (AcceptorTable table = open(4096)) {
			assertThat(table.size()).isEqualTo(49);
			assertThat(table.row(key(7))).isNull();
			assertThat(table.floor()).isEqualTo(new Ballot(100 + 257, "a"));
			assertThat(table.row(key(49))).isEqualTo(promised(100 + 299));
			assertThat(table.row(key(0))).isEqualTo(promised(100 + 250));
		}
	}

	/**
	 * A stop between writing the table and emptying its log leaves records the table
	 * already holds: they are not read over it (an older promise would lower a newer
	 * one).
	 */
	@Test
	void aLogTheTableAlreadyHoldsIsNotReadOverIt() throws IOException {
		Path log = this.folder.resolve("paxos-acceptor.log");
		byte[] stale;
		try (AcceptorTable table = open(4096)) {
			table.sync(table.put(KEY, promised(40))).block();
			stale = Files.readAllBytes(log);
			table.sync(table.put(KEY, promised(45))).block();
			for (int i = 0; i < 1_000 && Files.size(log) > 0; i++) {
				table.sync(table.put(key(i), promised(50 + i))).block();
			}
			assertThat(Files.size(log)).as("the log, written into the table").isZero();
		}
		Files.write(log, stale);
		try (AcceptorTable table = open(4096)) {
			assertThat(table.row(KEY)).isEqualTo(promised(45));
		}
	}

	/**
	 * Two records in the log: {@code KEY} promised 40, then key 1 promised 41; the size
	 * of the first.
	 */
	private long twoRecords() throws IOException {
		try (AcceptorTable table = open(1024 * 1024)) {
			table.sync(table.put(KEY, promised(40))).block();
			long first = Files.size(this.folder.resolve("paxos-acceptor.log"));
			table.sync(table.put(key(1), promised(41))).block();
			return first;
		}
	}

	/** A record cut short at the log's end (a write the crash stopped) is dropped. */
	@Test
	void aTornLastRecordIsDroppedAndTheRecordsBeforeItRead() throws IOException {
		Path log = this.folder.resolve("paxos-acceptor.log");
		long whole = twoRecords();
		byte[] bytes = Files.readAllBytes(log);
		Files.write(log, Arrays.copyOf(bytes, bytes.length - 3));
		try (AcceptorTable table = open(1024 * 1024)) {
			assertThat(table.row(KEY)).isEqualTo(promised(40));
			assertThat(table.row(key(1))).isNull();
			assertThat(Files.size(log)).as("the torn record cut off").isEqualTo(whole);
			table.sync(table.put(key(2), promised(42))).block();
		}
		try (AcceptorTable table = open(1024 * 1024)) {
			assertThat(table.row(KEY)).isEqualTo(promised(40));
			assertThat(table.row(key(2))).isEqualTo(promised(42));
		}
	}

	/** A damaged record with records after it is reported, never skipped. */
	@Test
	void aDamagedRecordBeforeTheLastIsReported() throws IOException {
		Path log = this.folder.resolve("paxos-acceptor.log");
		long first = twoRecords();
		byte[] bytes = Files.readAllBytes(log);
		bytes[(int) first / 2] ^= 0x10;
		Files.write(log, bytes);
		assertThatThrownBy(() -> open(1024 * 1024)).isInstanceOf(CorruptedStorageException.class)
			.hasMessageContaining("paxos-acceptor.log");
	}

	@Test
	void theTableIsBoundedInRows() throws IOException {
		try (AcceptorTable table = open()) {
			for (int i = 0; i < 10; i++) {
				table.put(("k" + i).getBytes(StandardCharsets.UTF_8),
						new Row(new Ballot(1, "a"), null, Ballot.NONE, 0));
			}
			assertThatThrownBy(() -> table.put(KEY, new Row(new Ballot(1, "a"), null, Ballot.NONE, 0)))
				.isInstanceOf(AcceptorTable.FullException.class);
			assertThat(table.size()).isEqualTo(10);
		}
	}

}
