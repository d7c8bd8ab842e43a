package io.quorumkv.storage.derby;

import static io.quorumkv.storage.contract.Entries.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.contract.Entries;
import io.quorumkv.storage.derby.DerbyStorageOptions.Durability;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the contract kit does not cover: key limits, options, files, stats. */
class DerbyStorageTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	@Test
	void longestKeyIsStoredAndLongerKeysAreRefusedOrAbsent() {
		byte[] longest = filled(EntryTable.MAX_KEY_BYTES, 0xFF);
		byte[] tooLong = filled(EntryTable.MAX_KEY_BYTES + 1, 0xFF);
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			storage.upsert(Entry.value(longest, bytes("v"), 1)).block(TIMEOUT);
			assertThat(storage.get(longest).block(TIMEOUT)).isEqualTo(Entry.value(longest, bytes("v"), 1));
			assertThatThrownBy(() -> storage.upsert(Entry.value(tooLong, bytes("v"), 1)).block(TIMEOUT))
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("1024");
			assertThat(storage.get(tooLong).block(TIMEOUT)).isNull();
		}
	}

	@Test
	void keysThatDifferOnlyByTrailingSpacesAreDistinct() {
		// Derby's FOR BIT DATA index takes trailing 0x20 bytes for padding: "a" and "a "
		// collided before keys were stored with a 0x00 suffix.
		List<byte[]> keys = List.of(bytes("a"), bytes("a "), bytes("a  "), bytes(0x61, 0x00), bytes(0x61, 0x1F),
				bytes(0x61, 0x20, 0x00), bytes(0x61, 0x21), bytes(" "), bytes("  "), bytes(0x20, 0xFF));
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			for (int i = 0; i < keys.size(); i++) {
				storage.upsert(Entry.value(keys.get(i), bytes("v" + i), 1)).block(TIMEOUT);
			}
			for (int i = 0; i < keys.size(); i++) {
				assertThat(storage.get(keys.get(i)).block(TIMEOUT))
					.isEqualTo(Entry.value(keys.get(i), bytes("v" + i), 1));
			}
			List<byte[]> sorted = keys.stream().sorted(Keys.ORDER).toList();
			assertThat(storage.scan(bytes(0x00), null).map(Entry::key).collectList().block(TIMEOUT))
				.containsExactlyElementsOf(sorted);
			assertThat(storage.scan(bytes("a"), bytes("a ")).map(Entry::key).collectList().block(TIMEOUT))
				.containsExactly(bytes("a"), bytes(0x61, 0x00), bytes(0x61, 0x1F));
			assertThat(storage.scan(bytes("a "), bytes(0x61, 0x21)).map(Entry::key).collectList().block(TIMEOUT))
				.containsExactly(bytes("a "), bytes(0x61, 0x20, 0x00), bytes("a  "));
		}
	}

	@Test
	void boundsLongerThanAKeyStillSelectTheRightKeys() {
		byte[] a = filled(EntryTable.MAX_KEY_BYTES, 0x10);
		byte[] b = filled(EntryTable.MAX_KEY_BYTES, 0x20);
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			for (byte[] key : List.of(a, b, bytes(0x30))) {
				storage.upsert(Entry.value(key, bytes("v"), 1)).block(TIMEOUT);
			}
			// a + 0x00 sorts after a and before b; b + 0x00 after b.
			byte[] afterA = Arrays.copyOf(a, a.length + 1);
			byte[] afterB = Arrays.copyOf(b, b.length + 1);
			assertThat(storage.scan(afterA, afterB).map(Entry::key).collectList().block(TIMEOUT)).containsExactly(b);
			assertThat(storage.scan(a, afterA).map(Entry::key).collectList().block(TIMEOUT)).containsExactly(a);
			assertThat(storage.scan(afterB, null).map(Entry::key).collectList().block(TIMEOUT))
				.containsExactly(bytes(0x30));
		}
	}

	@Test
	void pagesEndOnRowCountAndOnValueBytes() {
		DerbyStorageOptions options = DerbyStorageOptions.defaults(this.dir).withScanBatchSize(3);
		try (DerbyStorage storage = DerbyStorage.open(options)) {
			for (int i = 0; i < 9; i++) {
				storage.upsert(Entry.value(Entries.numberedKey(i), bytes("v" + i), 1)).block(TIMEOUT);
			}
			// 9 rows in pages of 3: the last page is full, the one after it empty.
			assertThat(storage.scan(Entries.numberedKey(0), null).collectList().block(TIMEOUT)).hasSize(9);
			assertThat(storage.scan(Entries.numberedKey(1), Entries.numberedKey(8)).collectList().block(TIMEOUT))
				.extracting(Entry::key)
				.containsExactly(IntStream.range(1, 8).mapToObj(Entries::numberedKey).toArray(byte[][]::new));
			byte[] mebibyte = new byte[1 << 20];
			for (int i = 0; i < 12; i++) {
				mebibyte[0] = (byte) i;
				storage.upsert(Entry.value(Entries.numberedKey(100 + i), mebibyte, 2)).block(TIMEOUT);
			}
			List<Entry> big = storage.scan(Entries.numberedKey(100), null).collectList().block(TIMEOUT);
			assertThat(big).hasSize(12).allMatch((e) -> e.value().length == 1 << 20);
			assertThat(big).extracting((e) -> (int) e.value()[0]).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
		}
	}

	@Test
	void noSyncFlushAndCloseKeepDataAndLeaveNoGlobalProperty() {
		DerbyStorageOptions options = DerbyStorageOptions.defaults(this.dir).withDurability(Durability.NO_SYNC);
		try (DerbyStorage storage = DerbyStorage.open(options)) {
			assertThat(System.getProperty("derby.system.durability")).isNull();
			storage.upsert(Entry.value(bytes("k"), bytes("v"), 1)).block(TIMEOUT);
			storage.flush().block(TIMEOUT);
			storage.upsert(Entry.value(bytes("j"), bytes("w"), 2)).block(TIMEOUT);
		}
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).isEqualTo(Entry.value(bytes("k"), bytes("v"), 1));
			assertThat(storage.get(bytes("j")).block(TIMEOUT)).isEqualTo(Entry.value(bytes("j"), bytes("w"), 2));
		}
		assertThat(this.dir.resolve("derby")).isDirectory();
	}

	@Test
	void aFolderCanBeOpenOnlyOnceAtATime() {
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			assertThatThrownBy(() -> DerbyStorage.open(DerbyStorageOptions.defaults(this.dir)))
				.isInstanceOf(StorageException.class)
				.hasMessageContaining("already open");
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).isNull();
		}
	}

	@Test
	void openOnAFileFailsClearlyAndLeavesNothingOpen() throws Exception {
		Path file = java.nio.file.Files.writeString(this.dir.resolve("not-a-folder"), "x");
		assertThatThrownBy(() -> DerbyStorage.open(DerbyStorageOptions.defaults(file)))
			.isInstanceOf(StorageException.class)
			.hasMessageContaining("cannot open derby database");
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).isNull();
		}
	}

	@Test
	void aTaskWhosePooledConnectionWasClosedRunsOnceMoreOnAnother() throws Exception {
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			AtomicInteger calls = new AtomicInteger();
			Long one = storage.withConnection(closingItsConnectionOnce(calls, 1));
			assertThat(one).isEqualTo(1L);
			assertThat(calls).hasValue(2);
			assertThat(storage.stats().counters()).containsEntry("reconnects", 1L);

			// A counted task (gets, upserts) counts once, though it ran twice.
			AtomicInteger countedCalls = new AtomicInteger();
			LongAdder counted = new LongAdder();
			Long again = storage.work(counted, closingItsConnectionOnce(countedCalls, 2)).block(TIMEOUT);
			assertThat(again).isEqualTo(2L);
			assertThat(countedCalls).hasValue(2);
			assertThat(counted.sum()).isOne();
			assertThat(storage.stats().counters()).containsEntry("reconnects", 2L);
			storage.upsert(Entry.value(bytes("k"), bytes("v"), 1)).block(TIMEOUT);
			assertThat(storage.get(bytes("k")).block(TIMEOUT)).isEqualTo(Entry.value(bytes("k"), bytes("v"), 1));

			AtomicInteger failing = new AtomicInteger();
			assertThatThrownBy(() -> storage.withConnection((connection) -> {
				failing.incrementAndGet();
				throw new SQLException("Table/View 'X' does not exist.", "42X05");
			})).isInstanceOf(SQLException.class);
			assertThat(failing).as("other failures are not run again").hasValue(1);
			assertThat(storage.stats().counters()).containsEntry("reconnects", 2L);
		}
	}

	/**
	 * A task that closes Derby's own connection under the pool's proxy on its first run,
	 * then selects {@code value}.
	 */
	private static DerbyStorage.SqlWork<Long> closingItsConnectionOnce(AtomicInteger calls, long value) {
		return (connection) -> {
			if (calls.incrementAndGet() == 1) {
				java.sql.Connection raw = connection.unwrap(java.sql.Connection.class);
				raw.rollback();
				raw.close();
			}
			try (PreparedStatement statement = connection.prepareStatement("VALUES " + value);
					ResultSet row = statement.executeQuery()) {
				row.next();
				return row.getLong(1);
			}
		};
	}

	@Test
	void statsCountOperationsAndShowThePool() {
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			storage.upsert(Entry.value(bytes("k"), bytes("v"), 1)).block(TIMEOUT);
			storage.get(bytes("k")).block(TIMEOUT);
			storage.scan(bytes("a"), null).blockLast(TIMEOUT);
			assertThat(storage.stats().backend()).isEqualTo("derby");
			assertThat(storage.stats().counters()).containsEntry("gets", 1L)
				.containsEntry("upserts", 1L)
				.containsEntry("scans", 1L)
				.containsEntry("retries", 0L);
			// Hikari fills the pool in the background: at least one, at most poolSize.
			assertThat(storage.stats().gauges()).containsEntry("pool.active", 0L)
				.containsKeys("pool.pending", "executor.queued");
			assertThat(storage.stats().gauges().get("pool.idle")).isBetween(1L, 8L);
			assertThat(storage.stats().healthy()).isTrue();
		}
	}

	@Test
	void optionsAreValidated() {
		DerbyStorageOptions defaults = DerbyStorageOptions.defaults(this.dir);
		assertThat(defaults.dir()).isAbsolute();
		assertThatThrownBy(() -> defaults.withPoolSize(0)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("poolSize");
		assertThatThrownBy(() -> defaults.withMaxQueuedTasks(0)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> DerbyStorageOptions.defaults(this.dir.resolve("a;b")))
			.isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> new DerbyStorageOptions(this.dir, 1, 1, Duration.ofMillis(10),
				Durability.SYNC_ON_COMMIT, 1000, 500))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("acquireTimeout");
	}

	private static byte[] filled(int length, int value) {
		byte[] out = new byte[length];
		Arrays.fill(out, (byte) value);
		return out;
	}

}
