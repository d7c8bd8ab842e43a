package io.quorumkv.storage.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What H2 (the driver under {@link H2Storage}, with its settings: {@code WRITE_DELAY=0},
 * {@code CHECKPOINT SYNC} to force) does after a failed {@code fsync} or write of its
 * MVStore file, seen through {@link FailingFilePath}. The answers are stated in
 * docs/storage-h2.md ("A failed write or fsync"); these tests keep them true for the H2
 * version in use.
 */
class H2FailedIoTest {

	@TempDir
	Path dir;

	@BeforeAll
	static void register() {
		FailingFilePath.register();
	}

	@AfterEach
	void disarm() {
		FailingFilePath.disarm();
	}

	/**
	 * A failed {@code fsync} is reported to the statement that asked for it, and is not
	 * fatal: the database goes on taking writes, and the next {@code CHECKPOINT SYNC}
	 * succeeds. On Linux the pages the failed {@code fsync} could not write may have been
	 * dropped, so that success does not prove them durable (PostgreSQL's "fsyncgate").
	 */
	@Test
	void aFailedFsyncIsReportedAndTheNextOneSucceeds() throws SQLException {
		try (Connection c = DriverManager.getConnection(url(), "sa", "")) {
			execute(c, "CREATE TABLE t(k INT PRIMARY KEY, v VARCHAR)");
			execute(c, "INSERT INTO t VALUES (1, 'a')");
			execute(c, "CHECKPOINT SYNC");
			FailingFilePath.failSyncs = true;
			execute(c, "INSERT INTO t VALUES (2, 'b')");
			assertThatThrownBy(() -> execute(c, "CHECKPOINT SYNC")).isInstanceOf(SQLException.class)
				.hasMessageContaining("Could not sync file");
			execute(c, "INSERT INTO t VALUES (3, 'c')");
			FailingFilePath.failSyncs = false;
			execute(c, "CHECKPOINT SYNC");
			assertThat(keys(c)).containsExactly(1, 2, 3);
			execute(c, "SHUTDOWN");
		}
		try (Connection c = DriverManager.getConnection(url(), "sa", "")) {
			assertThat(keys(c)).containsExactly(1, 2, 3);
			execute(c, "SHUTDOWN");
		}
	}

	/**
	 * A failed write of a commit is reported to that statement, and is fatal: H2 closes
	 * the database (every later statement fails with error 90098, "The database has been
	 * closed"), and opening it again recovers every commit before the failed one.
	 */
	@Test
	void aFailedWriteClosesTheDatabaseAndTheRestartRecoversEveryEarlierCommit() throws SQLException {
		try (Connection c = DriverManager.getConnection(url(), "sa", "")) {
			execute(c, "CREATE TABLE t(k INT PRIMARY KEY, v VARCHAR)");
			execute(c, "INSERT INTO t VALUES (1, 'a')");
			execute(c, "INSERT INTO t VALUES (2, 'b')");
			FailingFilePath.failWrites = true;
			assertThatThrownBy(() -> execute(c, "INSERT INTO t VALUES (3, 'c')")).isInstanceOf(SQLException.class)
				.hasMessageContaining("Writing to");
			FailingFilePath.failWrites = false;
			assertThatThrownBy(() -> execute(c, "INSERT INTO t VALUES (4, 'd')")).isInstanceOf(SQLException.class)
				.satisfies((ex) -> assertThat(((SQLException) ex).getErrorCode()).isEqualTo(90098));
			assertThatThrownBy(() -> keys(c)).isInstanceOf(SQLException.class)
				.satisfies((ex) -> assertThat(((SQLException) ex).getErrorCode()).isEqualTo(90098));
		}
		catch (SQLException ex) {
			// Closing the connection of a closed database may fail as well.
		}
		try (Connection c = DriverManager.getConnection(url(), "sa", "")) {
			assertThat(keys(c)).containsExactly(1, 2);
			execute(c, "SHUTDOWN");
		}
	}

	private String url() {
		return "jdbc:h2:" + FailingFilePath.SCHEME + ":" + this.dir.resolve("db").toAbsolutePath()
				+ ";WRITE_DELAY=0;DB_CLOSE_ON_EXIT=FALSE;DB_CLOSE_DELAY=-1";
	}

	private static void execute(Connection c, String sql) throws SQLException {
		try (Statement s = c.createStatement()) {
			s.execute(sql);
		}
	}

	private static List<Integer> keys(Connection c) throws SQLException {
		List<Integer> keys = new ArrayList<>();
		try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT k FROM t ORDER BY k")) {
			while (r.next()) {
				keys.add(r.getInt(1));
			}
		}
		return keys;
	}

}
