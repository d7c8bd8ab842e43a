package io.quorumkv.storage.h2;

import static io.quorumkv.storage.contract.Entries.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
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
class H2ExpiryColumnTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	@TempDir
	Path dir;

	@Test
	void aTableWithoutTheExpiryColumnGetsItAndKeepsItsRows() throws Exception {
		H2StorageOptions options = H2StorageOptions.defaults(this.dir);
		try (Connection connection = DriverManager.getConnection("jdbc:h2:file:" + options.databasePath(), "sa", "");
				Statement statement = connection.createStatement()) {
			// The table as the releases before expiry created it.
			statement.execute("CREATE TABLE kv (k VARBINARY(65536) NOT NULL PRIMARY KEY, v VARBINARY(67108864),"
					+ " ts BIGINT NOT NULL)");
			try (PreparedStatement insert = connection.prepareStatement("INSERT INTO kv VALUES (?, ?, ?)")) {
				insert.setBytes(1, bytes("old"));
				insert.setBytes(2, bytes("value"));
				insert.setLong(3, 42);
				insert.executeUpdate();
				insert.setBytes(1, bytes("gone"));
				insert.setBytes(2, null);
				insert.setLong(3, 43);
				insert.executeUpdate();
			}
			statement.execute("SHUTDOWN");
		}
		ManualClock clock = ManualClock.startingAt(Instant.parse("2032-01-01T00:00:00Z"));
		Entry lease = Entry.expiring(bytes("new"), bytes("v"), clock.micros(), clock.micros() + 1_000_000);
		try (H2Storage storage = H2Storage.open(options, clock)) {
			assertThat(storage.get(bytes("old")).block(TIMEOUT))
				.isEqualTo(Entry.value(bytes("old"), bytes("value"), 42));
			assertThat(storage.get(bytes("gone")).block(TIMEOUT)).isEqualTo(Entry.tombstone(bytes("gone"), 43));
			storage.upsert(lease).block(TIMEOUT);
			assertThat(storage.get(bytes("new")).block(TIMEOUT)).isEqualTo(lease);
			clock.advance(Duration.ofSeconds(1));
			assertThat(storage.get(bytes("new")).block(TIMEOUT))
				.isEqualTo(Entry.tombstone(bytes("new"), lease.timestamp()));
			assertThat(storage.get(bytes("old")).block(TIMEOUT))
				.isEqualTo(Entry.value(bytes("old"), bytes("value"), 42));
		}
		// Opened again: the column is there, nothing is added twice.
		try (H2Storage storage = H2Storage.open(options, clock)) {
			assertThat(storage.get(bytes("new")).block(TIMEOUT))
				.isEqualTo(Entry.tombstone(bytes("new"), lease.timestamp()));
			clock.advance(Duration.ofSeconds(-1));
			assertThat(storage.get(bytes("new")).block(TIMEOUT)).isEqualTo(lease);
		}
	}

}
