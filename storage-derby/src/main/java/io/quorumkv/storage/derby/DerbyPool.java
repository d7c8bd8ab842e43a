package io.quorumkv.storage.derby;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * The bounded HikariCP pool over the booted database.
 *
 * <p>
 * Fixed size (as many connections as executor threads, so a running task never waits for
 * one). Auto-commit is off: an upsert is a two-statement transaction, and reads commit
 * explicitly (free for a read-only Derby transaction), so every unit of work ends its own
 * transaction; Hikari rolls back any left open when a connection returns. Isolation is
 * read committed: a read never sees an uncommitted version. Statements are not cached by
 * the pool: Derby's embedded driver keeps compiled plans in its own statement cache keyed
 * by SQL text, so preparing the same constant SQL again skips compilation.
 */
final class DerbyPool {

	private DerbyPool() {
	}

	static HikariDataSource create(DerbyStorageOptions options, String url) {
		HikariConfig config = new HikariConfig();
		config.setPoolName("quorumkv-derby");
		config.setJdbcUrl(url);
		config.setMaximumPoolSize(options.poolSize());
		config.setMinimumIdle(options.poolSize());
		config.setConnectionTimeout(options.acquireTimeout().toMillis());
		config.setAutoCommit(false);
		config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
		// Embedded connections do not go stale; no idle retirement or keep-alive needed.
		config.setMaxLifetime(0);
		config.setIdleTimeout(0);
		return new HikariDataSource(config);
	}

}
