package io.quorumkv.bench;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.jspecify.annotations.Nullable;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The write path of {@link RocksDbStorage}, in one of two modes.
 *
 * <ul>
 * <li>{@link Mode#BLIND}: {@code put} (a list: one {@code WriteBatch}), no version check;
 * less work than the storage SPI asks, a lower bound on what an LSM write costs.</li>
 * <li>{@link Mode#COMPARE_VERSIONS}: what a RocksDB user writes to get last-write-wins,
 * as the LSM's upsert has it: under a lock on the key's stripe, {@code get} the stored
 * version, compare with {@link EntryOrder}, and {@code put} only a winner (a list: the
 * stripes of all its keys locked in ascending order, one {@code multiGet}, the winners in
 * one {@code WriteBatch}). The lock makes read-compare-write atomic against concurrent
 * writers of the same key, as the LSM's memtable slot does.</li>
 * </ul>
 */
final class RocksWriter {

	/** How an upsert is written. */
	enum Mode {

		/** {@code put} without reading. */
		BLIND,

		/** Read, compare versions, write the winner. */
		COMPARE_VERSIONS

	}

	/** Lock stripes of {@link Mode#COMPARE_VERSIONS}; a power of two. */
	static final int STRIPES = 1024;

	private final RocksDB db;

	private final WriteOptions writeOptions;

	private final Mode mode;

	private final ReentrantLock[] stripes;

	RocksWriter(RocksDB db, WriteOptions writeOptions, Mode mode) {
		this.db = db;
		this.writeOptions = writeOptions;
		this.mode = mode;
		this.stripes = new ReentrantLock[(mode == Mode.COMPARE_VERSIONS) ? STRIPES : 0];
		for (int i = 0; i < this.stripes.length; i++) {
			this.stripes[i] = new ReentrantLock();
		}
	}

	Mode mode() {
		return this.mode;
	}

	/**
	 * Writes {@code entry}; answers whether it was written (it won, or the mode is
	 * blind).
	 */
	boolean write(Entry entry) throws RocksDBException {
		if (this.mode == Mode.BLIND) {
			this.db.put(this.writeOptions, entry.key(), RocksDbStorage.encode(entry));
			return true;
		}
		ReentrantLock lock = this.stripes[stripe(entry.key())];
		lock.lock();
		try {
			byte[] stored = this.db.get(entry.key());
			Entry current = (stored != null) ? RocksDbStorage.decode(entry.key(), stored) : null;
			if (!EntryOrder.supersedes(entry, current)) {
				return false;
			}
			this.db.put(this.writeOptions, entry.key(), RocksDbStorage.encode(entry));
			return true;
		}
		finally {
			lock.unlock();
		}
	}

	/** Writes a list in one batch; answers how many entries were written. */
	int writeAll(List<Entry> entries) throws RocksDBException {
		if (this.mode == Mode.BLIND) {
			try (WriteBatch batch = new WriteBatch()) {
				for (Entry entry : entries) {
					batch.put(entry.key(), RocksDbStorage.encode(entry));
				}
				this.db.write(this.writeOptions, batch);
			}
			return entries.size();
		}
		// The list's own winners first: a key may appear more than once.
		Map<ByteBuffer, Entry> newest = new LinkedHashMap<>();
		for (Entry entry : entries) {
			newest.merge(ByteBuffer.wrap(entry.key()), entry, (a, b) -> EntryOrder.max(a, b));
		}
		int[] locked = newest.keySet().stream().mapToInt((key) -> stripe(key.array())).sorted().distinct().toArray();
		for (int i = 0; i < locked.length; i++) {
			this.stripes[locked[i]].lock();
		}
		try {
			List<Entry> candidates = new ArrayList<>(newest.values());
			List<byte[]> keys = candidates.stream().map(Entry::key).toList();
			List<byte @Nullable []> stored = this.db.multiGetAsList(keys);
			int written = 0;
			try (WriteBatch batch = new WriteBatch()) {
				for (int i = 0; i < candidates.size(); i++) {
					Entry candidate = candidates.get(i);
					byte[] current = stored.get(i);
					if (EntryOrder.supersedes(candidate,
							(current != null) ? RocksDbStorage.decode(candidate.key(), current) : null)) {
						batch.put(candidate.key(), RocksDbStorage.encode(candidate));
						written++;
					}
				}
				if (written > 0) {
					this.db.write(this.writeOptions, batch);
				}
			}
			return written;
		}
		finally {
			for (int i = locked.length - 1; i >= 0; i--) {
				this.stripes[locked[i]].unlock();
			}
		}
	}

	private static int stripe(byte[] key) {
		int hash = Arrays.hashCode(key);
		return (hash ^ (hash >>> 16)) & (STRIPES - 1);
	}

}
