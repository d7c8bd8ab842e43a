package io.quorumkv.storage.derby;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.RejectedExecutionException;

import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.StorageOverloadedException;

/** Maps JDBC failures to the SPI's exceptions; no raw {@link SQLException} leaves. */
final class SqlFailures {

	/** Deadlock victim. */
	static final String DEADLOCK = "40001";

	/** Lock wait timed out. */
	static final String LOCK_TIMEOUT = "40XL1";

	/** Unique key violation: a concurrent insert of the same key won. */
	static final String DUPLICATE_KEY = "23505";

	private SqlFailures() {
	}

	/** Whether the whole transaction may simply be run again. */
	static boolean isRetryable(SQLException ex) {
		String state = ex.getSQLState();
		return DEADLOCK.equals(state) || LOCK_TIMEOUT.equals(state) || DUPLICATE_KEY.equals(state);
	}

	/**
	 * Whether {@code ex}, or a cause or suppressed failure of it, says the connection is
	 * gone (SQLState class 08: closed, broken, never opened).
	 */
	static boolean isConnectionLost(Throwable ex) {
		for (Throwable failure = ex; failure != null; failure = failure.getCause()) {
			if (isConnectionState(failure)) {
				return true;
			}
			for (Throwable suppressed : failure.getSuppressed()) {
				if (isConnectionState(suppressed)) {
					return true;
				}
			}
		}
		return false;
	}

	private static boolean isConnectionState(Throwable failure) {
		return failure instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08");
	}

	static StorageException toStorageException(String action, SQLException ex) {
		if (ex instanceof SQLTransientConnectionException) {
			// HikariCP: no connection became free within acquireTimeout.
			return new StorageOverloadedException(
					"derby connection pool exhausted, cannot " + action + ": " + ex.getMessage());
		}
		return new StorageException(
				"derby failed to " + action + " (SQLState " + ex.getSQLState() + "): " + ex.getMessage(), ex);
	}

	/** Maps anything a JDBC task failed with; SPI exceptions pass unchanged. */
	static Throwable map(Throwable ex) {
		if (ex instanceof StorageException || ex instanceof IllegalArgumentException) {
			return ex;
		}
		if (ex instanceof RejectedExecutionException) {
			return new StorageOverloadedException("derby JDBC executor queue is full");
		}
		if (ex instanceof SQLException sql) {
			return toStorageException("run a statement", sql);
		}
		return new StorageException("derby storage failed: " + ex, ex);
	}

}
