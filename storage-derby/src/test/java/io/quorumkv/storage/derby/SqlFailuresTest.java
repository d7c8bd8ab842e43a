package io.quorumkv.storage.derby;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.RejectedExecutionException;

import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.StorageOverloadedException;
import org.junit.jupiter.api.Test;

/** Exhaustion becomes overload, SQL errors a clear StorageException, never raw JDBC. */
class SqlFailuresTest {

	@Test
	void lockConflictsAndDuplicateKeysAreRetried() {
		assertThat(SqlFailures.isRetryable(new SQLException("deadlock", "40001"))).isTrue();
		assertThat(SqlFailures.isRetryable(new SQLException("lock timeout", "40XL1"))).isTrue();
		assertThat(SqlFailures.isRetryable(new SQLException("duplicate", "23505"))).isTrue();
		assertThat(SqlFailures.isRetryable(new SQLException("disk full", "XSDG1"))).isFalse();
	}

	@Test
	void aLostConnectionIsFoundInCausesAndSuppressedFailures() {
		assertThat(SqlFailures.isConnectionLost(new SQLException("No current connection.", "08003"))).isTrue();
		SQLException upsert = new SQLException("internal", "XJ001");
		assertThat(SqlFailures.isConnectionLost(upsert)).isFalse();
		upsert.addSuppressed(new SQLException("No current connection.", "08003"));
		assertThat(SqlFailures.isConnectionLost(SqlFailures.toStorageException("upsert", upsert))).isTrue();
		assertThat(SqlFailures.isConnectionLost(new StorageException("x", new SQLException("closed", "08006"))))
			.isTrue();
		assertThat(SqlFailures.isConnectionLost(new SQLException("deadlock", "40001"))).isFalse();
		assertThat(SqlFailures.isConnectionLost(new SQLException("no state"))).isFalse();
	}

	@Test
	void poolAndExecutorExhaustionAreOverload() {
		assertThat(SqlFailures.map(new SQLTransientConnectionException("quorumkv-derby - Connection is not available")))
			.isInstanceOf(StorageOverloadedException.class)
			.hasMessageContaining("pool exhausted");
		assertThat(SqlFailures.map(new RejectedExecutionException())).isInstanceOf(StorageOverloadedException.class);
	}

	@Test
	void sqlErrorsBecomeStorageExceptionsWithTheirState() {
		Throwable mapped = SqlFailures.map(new SQLException("Table/View 'X' does not exist.", "42X05"));
		assertThat(mapped).isExactlyInstanceOf(StorageException.class)
			.hasMessageContaining("42X05")
			.hasMessageContaining("does not exist")
			.hasCauseInstanceOf(SQLException.class);
		assertThat(SqlFailures.map(new IllegalStateException("boom"))).isExactlyInstanceOf(StorageException.class);
		StorageException passThrough = new StorageException("already mapped");
		assertThat(SqlFailures.map(passThrough)).isSameAs(passThrough);
	}

}
