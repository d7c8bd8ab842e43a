package io.quorumkv.storage.derby;

import static io.quorumkv.storage.contract.Entries.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A database created before the expiry column gets it on open: its rows read as values
 * that do not expire, and expiring values can be written beside them.
 */
class DerbyExpiryColumnTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	@TempDir
	Path dir;

	@Test
	void aTableWithoutTheExpiryColumnGetsItAndKeepsItsRows() throws Exception {
		DerbyStorageOptions options = DerbyStorageOptions.defaults(this.dir);
		Files.createDirectories(this.dir);
		String url = "jdbc:derby:" + options.databaseDir();
		try (Connection connection = DriverManager.getConnection(url + ";create=true");
				Statement statement = connection.createStatement()) {
			// The table as the releases before expiry created it.
			statement.executeUpdate("CREATE TABLE " + EntryTable.TABLE
					+ " (K VARCHAR(1025) FOR BIT DATA NOT NULL PRIMARY KEY, TS BIGINT NOT NULL, V BLOB)");
			try (PreparedStatement insert = connection
				.prepareStatement("INSERT INTO " + EntryTable.TABLE + " (K, TS, V) VALUES (?, ?, ?)")) {
				insert.setBytes(1, EntryTable.encode(bytes("old")));
				insert.setLong(2, 42);
				insert.setBytes(3, bytes("value"));
				insert.executeUpdate();
				insert.setBytes(1, EntryTable.encode(bytes("gone")));
				insert.setLong(2, 43);
				insert.setNull(3, Types.BLOB);
				insert.executeUpdate();
			}
		}
		try {
			DriverManager.getConnection(url + ";shutdown=true").close();
		}
		catch (SQLException ex) {
			assertThat(ex.getSQLState()).as("Derby reports a shutdown as 08006").isEqualTo("08006");
		}
		ManualClock clock = ManualClock.startingAt(Instant.parse("2032-01-01T00:00:00Z"));
		Entry lease = Entry.expiring(bytes("new"), bytes("v"), clock.micros(), clock.micros() + 1_000_000);
		try (DerbyStorage storage = DerbyStorage.open(options, clock)) {
			assertThat(storage.get(bytes("old")).block(TIMEOUT))
				.isEqualTo(Entry.value(bytes("old"), bytes("value"), 42));
			assertThat(storage.get(bytes("gone")).block(TIMEOUT)).isEqualTo(Entry.tombstone(bytes("gone"), 43));
			storage.upsert(lease).block(TIMEOUT);
			assertThat(storage.get(bytes("new")).block(TIMEOUT)).isEqualTo(lease);
			clock.advance(Duration.ofSeconds(1));
			assertThat(storage.scan(bytes("a"), null).collectList().block(TIMEOUT)).containsExactly(
					Entry.tombstone(bytes("gone"), 43), Entry.tombstone(bytes("new"), lease.timestamp()),
					Entry.value(bytes("old"), bytes("value"), 42));
		}
		// Opened again: the column is there, nothing is added twice.
		try (DerbyStorage storage = DerbyStorage.open(options, clock)) {
			clock.advance(Duration.ofSeconds(-1));
			assertThat(storage.get(bytes("new")).block(TIMEOUT)).isEqualTo(lease);
		}
	}

}
