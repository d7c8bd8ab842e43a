package io.quorumkv.storage.derby;

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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What Derby (the driver under {@link DerbyStorage}, with its default durability) does
 * after a failed write or {@code fsync} of its transaction log, seen through
 * {@link FailingStorageFactory}. The answers are stated in docs/storage-derby.md ("A
 * failed write or fsync of the log"); these tests keep them true for the Derby version in
 * use.
 */
class DerbyFailedIoTest {

	private static final String FILE_SYNC_LOG = "derby.storage.fileSyncTransactionLog";

	@TempDir
	Path dir;

	@BeforeAll
	static void register() {
		FailingStorageFactory.register();
	}

	@AfterEach
	void disarm() {
		FailingStorageFactory.disarm();
		System.clearProperty(FILE_SYNC_LOG);
		shutdown(url());
	}

	/**
	 * A commit's log write that fails fails the statement (XSLA0, "Cannot flush the log
	 * file to disk") and shuts the database down: the connection is gone (08003). The
	 * next connection boots it again, and recovery from the log on disk keeps every
	 * earlier commit and not the failed one; it takes writes again.
	 */
	@Test
	void aFailedLogWriteShutsTheDatabaseDownAndTheNextConnectionRecoversIt() throws SQLException {
		try (Connection c = DriverManager.getConnection(url() + ";create=true")) {
			execute(c, "CREATE TABLE t(k INT PRIMARY KEY)");
			execute(c, "INSERT INTO t VALUES (1)");
			execute(c, "INSERT INTO t VALUES (2)");
			FailingStorageFactory.failLogWrites = true;
			assertThatThrownBy(() -> execute(c, "INSERT INTO t VALUES (3)")).isInstanceOf(SQLException.class)
				.satisfies((ex) -> assertThat(((SQLException) ex).getSQLState()).isEqualTo("XSLA0"));
			FailingStorageFactory.failLogWrites = false;
			assertThatThrownBy(() -> execute(c, "INSERT INTO t VALUES (4)")).isInstanceOf(SQLException.class)
				.satisfies((ex) -> assertThat(((SQLException) ex).getSQLState()).startsWith("08"));
		}
		catch (SQLException ex) {
			// Closing the connection of a database that was shut down may fail as well.
		}
		try (Connection c = DriverManager.getConnection(url())) {
			assertThat(keys(c)).containsExactly(1, 2);
			execute(c, "INSERT INTO t VALUES (5)");
		}
		shutdown(url());
		try (Connection c = DriverManager.getConnection(url())) {
			assertThat(keys(c)).containsExactly(1, 2, 5);
		}
	}

	/**
	 * By default Derby writes its log synchronously (a file opened in {@code rws} mode,
	 * every write reaching the disk before it returns) and asks for no separate
	 * {@code fsync} at a commit: a failing disk shows as a failed log write (above).
	 */
	@Test
	void byDefaultACommitAsksForNoSeparateFsyncOfTheLog() throws SQLException {
		try (Connection c = DriverManager.getConnection(url() + ";create=true")) {
			execute(c, "CREATE TABLE t(k INT PRIMARY KEY)");
			FailingStorageFactory.logSyncs.set(0);
			FailingStorageFactory.failLogSyncs = true;
			for (int k = 1; k <= 20; k++) {
				execute(c, "INSERT INTO t VALUES (" + k + ")");
			}
			assertThat(FailingStorageFactory.logSyncs.get()).isZero();
		}
	}

	/**
	 * With {@code derby.storage.fileSyncTransactionLog=true} (not set by
	 * {@link DerbyStorage}) a commit forces the log with {@code fsync}, and a failed one
	 * is retried (up to 20 times, 200 ms apart): a later success is taken for durability
	 * and the commit succeeds. After "fsyncgate" that success proves nothing about the
	 * pages the failed {@code fsync} dropped.
	 */
	@Test
	void withAnFsyncedLogAFailedFsyncIsRetriedAndALaterSuccessCommits() throws Exception {
		System.setProperty(FILE_SYNC_LOG, "true");
		try (Connection c = DriverManager.getConnection(url() + ";create=true")) {
			execute(c, "CREATE TABLE t(k INT PRIMARY KEY)");
			execute(c, "INSERT INTO t VALUES (1)");
			FailingStorageFactory.logSyncs.set(0);
			FailingStorageFactory.failLogSyncs = true;
			CompletableFuture<Void> insert = CompletableFuture.runAsync(() -> {
				try {
					execute(c, "INSERT INTO t VALUES (2)");
				}
				catch (SQLException ex) {
					throw new IllegalStateException(ex);
				}
			});
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (FailingStorageFactory.logSyncs.get() < 2 && System.nanoTime() < deadline) {
				Thread.sleep(5);
			}
			assertThat(FailingStorageFactory.logSyncs.get()).as("failed log fsyncs before the retry succeeds")
				.isGreaterThanOrEqualTo(2);
			FailingStorageFactory.failLogSyncs = false;
			insert.get(10, TimeUnit.SECONDS);
			assertThat(keys(c)).containsExactly(1, 2);
		}
	}

	private String url() {
		return "jdbc:derby:" + FailingStorageFactory.PROTOCOL + ":" + this.dir.resolve("db").toAbsolutePath();
	}

	private static void shutdown(String url) {
		try {
			DriverManager.getConnection(url + ";shutdown=true").close();
		}
		catch (SQLException ex) {
			// 08006: shut down, as Derby reports it; XJ004: it was not booted.
		}
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
