package io.quorumkv.storage.lsm;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import io.quorumkv.storage.lsm.memtable.MemTable;
import io.quorumkv.storage.lsm.wal.WalWriter;

/**
 * A memtable and the WAL segments that hold the same writes: its own segment {@code wal},
 * and for the memtable recovery replayed, the segments of the run before
 * ({@code replayed}, oldest first, all numbered below {@code wal}), which are deleted
 * with {@code wal} once the memtable is in a table.
 *
 * @param replayedBytes the size of the replayed segments on disk
 * @param frozenAt the engine's time (microseconds) when the memtable stopped taking
 * writes; {@link #ACTIVE} while it takes them. Every write the engine took before it is
 * in this memtable or an older one (an incremental backup's reach, docs/backup.md)
 */
record MemTableSlot(MemTable memtable, WalWriter wal, List<Path> replayed, long firstSegment, long replayedBytes,
		long frozenAt) {

	/** The {@code frozenAt} of the active memtable. */
	static final long ACTIVE = Long.MIN_VALUE;

	MemTableSlot {
		replayed = List.copyOf(replayed);
	}

	/** A memtable whose writes are all in its own segment. */
	MemTableSlot(MemTable memtable, WalWriter wal) {
		this(memtable, wal, List.of(), wal.number(), 0, ACTIVE);
	}

	/** This memtable, frozen at {@code time}. */
	MemTableSlot frozen(long time) {
		return new MemTableSlot(this.memtable, this.wal, this.replayed, this.firstSegment, this.replayedBytes, time);
	}

	/** Every segment that holds this memtable's writes, its own last. */
	List<Path> segments() {
		return Stream.concat(this.replayed.stream(), Stream.of(this.wal.path())).toList();
	}

}
