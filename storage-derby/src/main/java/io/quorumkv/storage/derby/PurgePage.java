package io.quorumkv.storage.derby;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import io.quorumkv.storage.PurgePolicy;
import org.jspecify.annotations.Nullable;

/**
 * One page of a purge pass: up to {@code batchSize} tombstones after the page before, in
 * key order, and the ones the policy allows deleted in the same transaction, one batched
 * statement. A value expired at {@code now} is the tombstone of its timestamp and counts
 * as one ({@code V IS NULL OR XP <= now}). The delete names the tombstone's timestamp
 * ({@code K = ? AND TS = ? AND (V IS NULL OR XP <= now)}), so a version written since the
 * page was read stays: a purge never undoes a write.
 *
 * @param next the stored key the next page starts after, or null after the last page
 * @param purged the tombstones deleted
 */
record PurgePage(byte @Nullable [] next, long purged) {

	private static final String FIRST = "SELECT K, TS FROM " + EntryTable.TABLE
			+ " WHERE (V IS NULL OR XP <= ?) ORDER BY K FETCH FIRST ? ROWS ONLY";

	private static final String NEXT = "SELECT K, TS FROM " + EntryTable.TABLE
			+ " WHERE (V IS NULL OR XP <= ?) AND K > ? ORDER BY K FETCH FIRST ? ROWS ONLY";

	private static final String DELETE = "DELETE FROM " + EntryTable.TABLE
			+ " WHERE K = ? AND TS = ? AND (V IS NULL OR XP <= ?)";

	/**
	 * Reads and purges one page and commits.
	 * @param after the stored key (with its 0x00) the page starts after; null for the
	 * first
	 * @param now the instant expiry is judged by, in microseconds
	 */
	static PurgePage run(Connection connection, byte @Nullable [] after, int batchSize, PurgePolicy policy, long now)
			throws SQLException {
		int seen = 0;
		byte[] last = null;
		int batched = 0;
		try (PreparedStatement select = connection.prepareStatement((after == null) ? FIRST : NEXT);
				PreparedStatement delete = connection.prepareStatement(DELETE)) {
			int index = 1;
			select.setLong(index++, now);
			if (after != null) {
				select.setBytes(index++, after);
			}
			select.setInt(index, batchSize);
			try (ResultSet rows = select.executeQuery()) {
				while (seen < batchSize && rows.next()) {
					seen++;
					last = rows.getBytes(1);
					long timestamp = rows.getLong(2);
					if (policy.mayPurge(EntryTable.decode(last), timestamp)) {
						delete.setBytes(1, last);
						delete.setLong(2, timestamp);
						delete.setLong(3, now);
						delete.addBatch();
						batched++;
					}
				}
			}
			long purged = 0;
			if (batched > 0) {
				for (int count : delete.executeBatch()) {
					purged += Math.max(count, 0);
				}
			}
			connection.commit();
			return new PurgePage((seen == batchSize) ? last : null, purged);
		}
	}

}
