package io.quorumkv.service.paxos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

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
	 * code) is read with the floor as each row's commit, and written back as version 2.
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
		try (AcceptorTable table = open()) {
			assertThat(table.floor()).isEqualTo(floor);
			assertThat(table.size()).isEqualTo(2);
			assertThat(table.row(a)).isEqualTo(rowA);
			assertThat(table.row(b)).isEqualTo(rowB);
			table.sync(table.put(KEY, new Row(new Ballot(90, "n0"), null, floor, 4_000))).block();
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
		try (AcceptorTable table = open()) {
			table.sync(table.put(KEY, new Row(new Ballot(40, "a"), null, Ballot.NONE, 0))).block();
		}
		Path file = this.folder.resolve("paxos-acceptor");
		byte[] bytes = Files.readAllBytes(file);
		bytes[bytes.length / 2] ^= 0x10;
		Files.write(file, bytes);
		assertThatThrownBy(this::open).isInstanceOf(CorruptedStorageException.class);
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
