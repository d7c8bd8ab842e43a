package io.quorumkv.storage.derby;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * One page of a scan: keyset pagination over the primary key. Each page is one short
 * read-committed transaction that starts after the last key of the page before, so no
 * cursor, lock or connection outlives a page: a cancelled or abandoned scan holds
 * nothing. A page ends after {@code batchSize} rows or once its values pass
 * {@link #MAX_PAGE_BYTES} (values can be 1 MiB each).
 *
 * @param entries the rows, in key order
 * @param next where the next page starts, or null when the range is exhausted
 */
record ScanPage(List<Entry> entries, @Nullable Bound next) {

	static final long MAX_PAGE_BYTES = 8L << 20;

	/**
	 * A bound on the key (bound to SQL in its stored form). A bound longer than the
	 * column cannot be bound as a parameter, so it becomes its prefix with the comparison
	 * adjusted: for keys of at most {@code MAX_KEY_BYTES}, {@code k >= from} equals
	 * {@code k > prefix(from)} and {@code k < to} equals {@code k <= prefix(to)}.
	 */
	record Bound(byte[] key, boolean inclusive) {

		static Bound lower(byte[] fromInclusive) {
			return (fromInclusive.length > EntryTable.MAX_KEY_BYTES)
					? new Bound(Arrays.copyOf(fromInclusive, EntryTable.MAX_KEY_BYTES), false)
					: new Bound(fromInclusive, true);
		}

		static @Nullable Bound upper(byte @Nullable [] toExclusive) {
			if (toExclusive == null) {
				return null;
			}
			return (toExclusive.length > EntryTable.MAX_KEY_BYTES)
					? new Bound(Arrays.copyOf(toExclusive, EntryTable.MAX_KEY_BYTES), true)
					: new Bound(toExclusive, false);
		}

	}

	static ScanPage read(Connection connection, Bound from, @Nullable Bound to, int batchSize) throws SQLException {
		String sql = "SELECT K, TS, V, XP FROM " + EntryTable.TABLE + " WHERE K " + (from.inclusive() ? ">=" : ">")
				+ " ?" + ((to == null) ? "" : " AND K " + (to.inclusive() ? "<=" : "<") + " ?")
				+ " ORDER BY K FETCH FIRST ? ROWS ONLY";
		List<Entry> entries = new ArrayList<>(Math.min(batchSize, 1024));
		boolean more;
		try (PreparedStatement select = connection.prepareStatement(sql)) {
			int index = 1;
			select.setBytes(index++, EntryTable.encode(from.key()));
			if (to != null) {
				select.setBytes(index++, EntryTable.encode(to.key()));
			}
			select.setInt(index, batchSize);
			select.setFetchSize(batchSize);
			long bytes = 0;
			try (ResultSet rows = select.executeQuery()) {
				while (entries.size() < batchSize && bytes < MAX_PAGE_BYTES && rows.next()) {
					Entry entry = new Entry(EntryTable.decode(rows.getBytes(1)), rows.getBytes(3), rows.getLong(2),
							rows.getLong(4));
					bytes += entry.sizeInBytes();
					entries.add(entry);
				}
				more = entries.size() == batchSize || bytes >= MAX_PAGE_BYTES;
			}
		}
		connection.commit();
		Bound next = (more && !entries.isEmpty()) ? new Bound(entries.getLast().key(), false) : null;
		return new ScanPage(entries, next);
	}

}
