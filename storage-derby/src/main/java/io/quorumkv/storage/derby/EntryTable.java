package io.quorumkv.storage.derby;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.Arrays;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.jspecify.annotations.Nullable;

/**
 * The one table of the store and the statements on it.
 *
 * <pre>
 * CREATE TABLE QKV_ENTRY (
 *   K  VARCHAR(1025) FOR BIT DATA NOT NULL PRIMARY KEY, -- key bytes + 0x00
 *   TS BIGINT NOT NULL,                                 -- the version's timestamp
 *   V  BLOB,                                            -- NULL is a tombstone
 *   XP BIGINT DEFAULT 9223372036854775807 NOT NULL      -- expiry, microseconds
 * )
 * </pre>
 *
 * {@code XP} was added after the table's first release: a table without it gets it on
 * open, every row then not expiring ({@code Long.MAX_VALUE}, also a tombstone's).
 * Invariants: one row per key, holding the greatest version by {@link EntryOrder} of all
 * upserts committed so far; an expired row stays as it is and is read as the tombstone of
 * its {@code TS}, which a purge counts as a tombstone; every stored {@code K} is the key
 * followed by one 0x00 byte (see {@link #encode}). Each method works on a connection it
 * is given with auto-commit off, and ends the transaction it started (commit or
 * rollback).
 */
final class EntryTable {

	/** Longest key; the primary-key index of Derby keeps keys well under half a page. */
	static final int MAX_KEY_BYTES = 1024;

	static final String TABLE = "QKV_ENTRY";

	private static final String CREATE = "CREATE TABLE " + TABLE + " (K VARCHAR(" + (MAX_KEY_BYTES + 1)
			+ ") FOR BIT DATA NOT NULL PRIMARY KEY, TS BIGINT NOT NULL, V BLOB)";

	static final String EXPIRY_COLUMN = "XP";

	private static final String ADD_EXPIRY = "ALTER TABLE " + TABLE + " ADD COLUMN " + EXPIRY_COLUMN
			+ " BIGINT DEFAULT " + Long.MAX_VALUE + " NOT NULL";

	private static final String GET = "SELECT TS, V, XP FROM " + TABLE + " WHERE K = ?";

	/**
	 * Positioned on the row, the cursor holds Derby's update lock on it: a concurrent
	 * upsert of the same key waits at this SELECT until this transaction ends. The lock
	 * turns exclusive on {@code updateRow()}, so no lock upgrade can deadlock two
	 * upserts.
	 */
	private static final String LOCK_ROW = "SELECT TS, V, XP FROM " + TABLE + " WHERE K = ? FOR UPDATE OF TS, V, XP";

	private static final String INSERT = "INSERT INTO " + TABLE + " (K, TS, V, XP) VALUES (?, ?, ?, ?)";

	/** Removes a row only while it still holds the version a scan saw. */
	private static final String DELETE_SEEN = "DELETE FROM " + TABLE + " WHERE K = ? AND TS = ?";

	private EntryTable() {
	}

	/**
	 * The stored form of a key: the key and one 0x00 byte. Derby compares
	 * {@code FOR BIT DATA} values in unsigned byte order, shorter first, except that its
	 * primary-key index takes a longer value whose extra bytes are all 0x20 (spaces) for
	 * the shorter one: keys {@code "a"} and {@code "a "} collide as a duplicate key
	 * (found by {@code DerbyStorageTest.keysThatDifferOnlyByTrailingSpacesAreDistinct}).
	 * A stored value always ends with 0x00, so no two differ only by trailing spaces, and
	 * appending the same 0x00 keeps the unsigned order of keys (when {@code x} is a
	 * proper prefix of {@code y}, {@code x+00} is smaller than {@code y+00}, or a proper
	 * prefix of it).
	 */
	static byte[] encode(byte[] key) {
		return Arrays.copyOf(key, key.length + 1);
	}

	static byte[] decode(byte[] stored) {
		return Arrays.copyOf(stored, stored.length - 1);
	}

	/** Creates the table, or adds the expiry column to a table created without it. */
	static void createIfAbsent(Connection connection) throws SQLException {
		boolean exists;
		try (ResultSet tables = connection.getMetaData().getTables(null, null, TABLE, null)) {
			exists = tables.next();
		}
		boolean hasExpiry = false;
		if (exists) {
			try (ResultSet columns = connection.getMetaData().getColumns(null, null, TABLE, EXPIRY_COLUMN)) {
				hasExpiry = columns.next();
			}
		}
		try (Statement statement = connection.createStatement()) {
			if (!exists) {
				statement.executeUpdate(CREATE);
			}
			if (!hasExpiry) {
				statement.executeUpdate(ADD_EXPIRY);
			}
		}
		if (!connection.getAutoCommit()) {
			connection.commit();
		}
	}

	/**
	 * Deletes each of {@code entries} whose row still holds that version, in one
	 * transaction; the number deleted.
	 */
	static long deleteSeen(Connection connection, java.util.List<Entry> entries) throws SQLException {
		long deleted = 0;
		try (PreparedStatement delete = connection.prepareStatement(DELETE_SEEN)) {
			for (Entry entry : entries) {
				delete.setBytes(1, encode(entry.key()));
				delete.setLong(2, entry.timestamp());
				deleted += delete.executeUpdate();
			}
		}
		connection.commit();
		return deleted;
	}

	/** The kept entry of {@code key}, or null. */
	static @Nullable Entry get(Connection connection, byte[] key) throws SQLException {
		if (key.length > MAX_KEY_BYTES) {
			return null; // such a key could never be stored
		}
		try (PreparedStatement select = connection.prepareStatement(GET)) {
			select.setBytes(1, encode(key));
			try (ResultSet row = select.executeQuery()) {
				Entry entry = row.next() ? new Entry(key, row.getBytes(2), row.getLong(1), row.getLong(3)) : null;
				connection.commit();
				return entry;
			}
		}
	}

	/**
	 * One attempt to keep {@code entry}: lock the key's row and compare in Java with
	 * {@link EntryOrder}, or insert when there is no row. A concurrent insert of the same
	 * key fails this one with a duplicate key; the caller then runs it again and finds
	 * the row.
	 * @return whether {@code entry} was written
	 */
	static boolean upsertOnce(Connection connection, Entry entry) throws SQLException {
		try (PreparedStatement lock = connection.prepareStatement(LOCK_ROW, ResultSet.TYPE_FORWARD_ONLY,
				ResultSet.CONCUR_UPDATABLE)) {
			lock.setBytes(1, encode(entry.key()));
			try (ResultSet row = lock.executeQuery()) {
				if (row.next()) {
					boolean wins = wins(entry, row);
					if (wins) {
						row.updateLong(1, entry.timestamp());
						if (entry.value() == null) {
							row.updateNull(2);
						}
						else {
							row.updateBytes(2, entry.value());
						}
						row.updateLong(3, entry.expiresAt());
						row.updateRow();
					}
					row.close();
					connection.commit();
					return wins;
				}
			}
		}
		try (PreparedStatement insert = connection.prepareStatement(INSERT)) {
			insert.setBytes(1, encode(entry.key()));
			insert.setLong(2, entry.timestamp());
			if (entry.value() == null) {
				insert.setNull(3, Types.BLOB);
			}
			else {
				insert.setBytes(3, entry.value());
			}
			insert.setLong(4, entry.expiresAt());
			insert.executeUpdate();
		}
		connection.commit();
		return true;
	}

	/** Reads the kept value only on a timestamp tie, the one case that needs it. */
	private static boolean wins(Entry entry, ResultSet row) throws SQLException {
		long kept = row.getLong(1);
		if (entry.timestamp() != kept) {
			return entry.timestamp() > kept;
		}
		return EntryOrder.compareVersions(entry.timestamp(), entry.value(), entry.expiresAt(), kept, row.getBytes(2),
				row.getLong(3)) > 0;
	}

	/** Forces a checkpoint: dirty pages written, the log truncated. */
	static void checkpoint(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute("CALL SYSCS_UTIL.SYSCS_CHECKPOINT_DATABASE()");
		}
		connection.commit();
	}

}
