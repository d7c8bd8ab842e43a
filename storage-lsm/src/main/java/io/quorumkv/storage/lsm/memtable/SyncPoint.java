package io.quorumkv.storage.lsm.memtable;

import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * Named points in the memtable's code where a test can run code of its own (hold the
 * thread there, let another one through), in the manner of RocksDB's
 * {@code TEST_SYNC_POINT}: a race's window becomes a test that fails every time instead
 * of one run in a few.
 *
 * <p>
 * Compiled in and costing nothing when no hook is set: a point is reached only on a
 * memtable's slow paths (a key new to it), where it is one read of a field that stays
 * null outside tests, beside a skip-list insert. Tests set the hook and clear it in a
 * {@code finally}; the hook runs on the thread that reached the point.
 */
final class SyncPoint {

	/**
	 * In {@link MemTable#put} of a key new to the memtable, between its insertion into
	 * the skip list and into the hash index.
	 */
	static final String BETWEEN_INSERTS = "MemTable.put:betweenInserts";

	private static volatile @Nullable Consumer<String> hook;

	private SyncPoint() {
	}

	/** Runs {@code hook} at every point reached from now on; null to stop. For tests. */
	static void set(@Nullable Consumer<String> hook) {
		SyncPoint.hook = hook;
	}

	static void reach(String point) {
		Consumer<String> current = hook;
		if (current != null) {
			current.accept(point);
		}
	}

}
