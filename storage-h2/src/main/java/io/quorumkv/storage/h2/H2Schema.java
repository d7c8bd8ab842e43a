package io.quorumkv.storage.h2;

import java.util.List;

/**
 * The one table and the statements on it. See docs/storage-h2.md for why these types.
 *
 * <p>
 * Invariants: one row per key; {@code v IS NULL} is a tombstone; {@code exp} is the
 * value's expiry in microseconds ({@code Long.MAX_VALUE}: none, and always for a
 * tombstone); the row holds the greatest version ever upserted by {@code EntryOrder}. An
 * expired row stays as it is and is read as the tombstone of its {@code ts}: a purge
 * counts a row with {@code exp <= now} as a tombstone. H2 compares {@code VARBINARY} as
 * unsigned bytes ({@code ValueBytesBase.compareTypeSafe} uses
 * {@code Arrays.compareUnsigned}), so the primary key index is in {@code Keys.ORDER} and
 * {@code s.v > kv.v} is the unsigned tie-break of the order.
 */
final class H2Schema {

	/** Longest key: 64 KiB. Longer keys fail with a {@code StorageException}. */
	static final int MAX_KEY_BYTES = 64 * 1024;

	/**
	 * Longest value: 64 MiB, kept inline in the row (a {@code VARBINARY}, not a BLOB, so
	 * that H2 compares it and r2dbc-h2 reads it as one {@code byte[]}).
	 */
	static final int MAX_VALUE_BYTES = 64 * 1024 * 1024;

	static final String CREATE_TABLE = "CREATE TABLE IF NOT EXISTS kv (k VARBINARY(" + MAX_KEY_BYTES
			+ ") NOT NULL PRIMARY KEY, v VARBINARY(" + MAX_VALUE_BYTES + "), ts BIGINT NOT NULL)";

	/**
	 * The expiry column, added to a table created before it (every row then does not
	 * expire).
	 */
	static final String ADD_EXPIRY = "ALTER TABLE kv ADD COLUMN IF NOT EXISTS exp BIGINT DEFAULT " + Long.MAX_VALUE
			+ " NOT NULL";

	static final String SELECT_ONE = "SELECT k, v, ts, exp FROM kv WHERE k = $1";

	/**
	 * Keeps the greater version in one statement. The row is locked by the statement and
	 * H2 re-checks the WHEN condition against the newest committed row after waiting for
	 * the lock, so there is no read-then-write window; the only conflict left is two
	 * concurrent inserts of a new key, which fails one with a duplicate key and is
	 * retried (then as an update). The casts carry no length: a cast to
	 * {@code VARBINARY(n)} truncates silently, while the column's length check fails a
	 * too long key or value loudly. The last tie-break of the order: between equal values
	 * of equal timestamps the earlier expiry wins.
	 */
	static final String UPSERT = "MERGE INTO kv USING (VALUES (CAST($1 AS VARBINARY), CAST($2 AS VARBINARY),"
			+ " CAST($3 AS BIGINT), CAST($4 AS BIGINT))) AS s(k, v, ts, exp)" + " ON kv.k = s.k" //
			+ " WHEN MATCHED AND (s.ts > kv.ts OR (s.ts = kv.ts AND kv.v IS NOT NULL AND (s.v IS NULL OR s.v > kv.v"
			+ " OR (s.v = kv.v AND s.exp < kv.exp))))" //
			+ " THEN UPDATE SET v = s.v, ts = s.ts, exp = s.exp" //
			+ " WHEN NOT MATCHED THEN INSERT (k, v, ts, exp) VALUES (s.k, s.v, s.ts, s.exp)";

	static final String SCAN_FIRST_PAGE = "SELECT k, v, ts, exp FROM kv WHERE k >= $1 ORDER BY k LIMIT $2";

	static final String SCAN_FIRST_PAGE_BOUNDED = "SELECT k, v, ts, exp FROM kv WHERE k >= $1 AND k < $3 ORDER BY k LIMIT $2";

	static final String SCAN_NEXT_PAGE = "SELECT k, v, ts, exp FROM kv WHERE k > $1 ORDER BY k LIMIT $2";

	static final String SCAN_NEXT_PAGE_BOUNDED = "SELECT k, v, ts, exp FROM kv WHERE k > $1 AND k < $3 ORDER BY k LIMIT $2";

	/**
	 * A page of tombstones for a purge pass, in key order: {@code $1} the page size,
	 * {@code $2} now (a value expired by then is the tombstone of its {@code ts}).
	 */
	static final String TOMBSTONES_FIRST_PAGE = "SELECT k, ts FROM kv WHERE (v IS NULL OR exp <= $2) ORDER BY k LIMIT $1";

	/** The next page, after key {@code $2}; {@code $3} now. */
	static final String TOMBSTONES_NEXT_PAGE = "SELECT k, ts FROM kv WHERE (v IS NULL OR exp <= $3) AND k > $2 ORDER BY k LIMIT $1";

	/**
	 * Drops a tombstone (or a value expired by {@code $3}) only if it is still the kept
	 * version: a newer version written since it was read (a value, or a tombstone of
	 * another timestamp) is not touched.
	 */
	static final String PURGE = "DELETE FROM kv WHERE k = $1 AND ts = $2 AND (v IS NULL OR exp <= $3)";

	/**
	 * Removes a row only while it still holds the version a scan saw: a newer write of
	 * the key, which changes its timestamp, is kept.
	 */
	static final String DELETE_SEEN = "DELETE FROM kv WHERE k = $1 AND ts = $2";

	static final String CHECKPOINT_SYNC = "CHECKPOINT SYNC";

	/** What {@code close()} runs, in order, on a connection of its own. */
	static final List<String> SHUTDOWN_SEQUENCE = List.of("SET WRITE_DELAY 0", CHECKPOINT_SYNC, "SHUTDOWN");

	private H2Schema() {
	}

	static String scanPage(boolean first, boolean bounded) {
		if (first) {
			return bounded ? SCAN_FIRST_PAGE_BOUNDED : SCAN_FIRST_PAGE;
		}
		return bounded ? SCAN_NEXT_PAGE_BOUNDED : SCAN_NEXT_PAGE;
	}

}
