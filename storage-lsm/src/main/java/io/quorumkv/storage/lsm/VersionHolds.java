package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

import io.quorumkv.storage.Snapshots;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;

/**
 * The open {@link Snapshots#hold() holds} of an engine: while one is open, every version
 * the store holds stays where a snapshot finds it. Two things drop versions, and both
 * wait:
 * <ul>
 * <li>a flush deletes its memtable's WAL segments, the only files with the versions a
 * memtable overwrote (its table keeps the newest of each key): they are kept, and
 * {@link #retained()} names them, until the last hold closes;</li>
 * <li>a compaction that merges tables keeps only the newest version of a key: it waits
 * ({@link #awaitNone}) until the last hold closes. A move of a table to another level,
 * which drops nothing, does not wait.</li>
 * </ul>
 * A hold is meant to last a snapshot (the flush of a memtable). Writers do not stall for
 * the tables level 0 gains meanwhile ({@link LsmEngine#mustStall}): a read may look into
 * more of them until the compactions that waited have run.
 */
final class VersionHolds {

	private final FileIo io;

	private final Runnable released;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition none = this.lock.newCondition();

	/** Written under the lock, read without it (on every write: {@link #held()}). */
	private volatile int open;

	private List<Path> retained = new ArrayList<>();

	/**
	 * @param released run after the last hold closed (the engine schedules the
	 * compactions that waited)
	 */
	VersionHolds(FileIo io, Runnable released) {
		this.io = io;
		this.released = released;
	}

	/** Opens a hold; closing it again does nothing. */
	Snapshots.Hold open() {
		this.lock.lock();
		try {
			this.open++;
		}
		finally {
			this.lock.unlock();
		}
		AtomicBoolean closed = new AtomicBoolean();
		return () -> {
			if (closed.compareAndSet(false, true)) {
				close();
			}
		};
	}

	private void close() {
		List<Path> kept = release(true);
		if (kept != null) {
			deleteAll(kept);
			this.released.run();
		}
	}

	/**
	 * Ends one hold ({@code one}) or lets go of every kept segment (the engine closes);
	 * the segments to delete once no hold is open, else null.
	 */
	private @Nullable List<Path> release(boolean one) {
		this.lock.lock();
		try {
			if (one && --this.open > 0) {
				return null;
			}
			List<Path> kept = this.retained;
			this.retained = new ArrayList<>();
			this.none.signalAll();
			return kept;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Whether a hold is open. */
	boolean held() {
		return this.open > 0;
	}

	/**
	 * The WAL segments of flushed memtables, no longer deleted because a hold is open,
	 * oldest first.
	 */
	List<Path> retained() {
		this.lock.lock();
		try {
			return List.copyOf(this.retained);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Deletes the WAL segments of a flushed memtable, or keeps them while a hold is open.
	 */
	void retire(List<Path> segments) throws IOException {
		this.lock.lock();
		try {
			if (this.open > 0) {
				this.retained.addAll(segments);
				return;
			}
		}
		finally {
			this.lock.unlock();
		}
		for (Path segment : segments) {
			this.io.deleteIfExists(segment);
		}
	}

	/**
	 * Waits, on the compaction thread, until no hold is open.
	 * @throws CancellationException once {@code stopping} says the engine closes
	 */
	void awaitNone(BooleanSupplier stopping) {
		this.lock.lock();
		try {
			while (this.open > 0) {
				if (stopping.getAsBoolean()) {
					throw new CancellationException("closing");
				}
				this.none.await(50, TimeUnit.MILLISECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new CancellationException("interrupted");
		}
		finally {
			this.lock.unlock();
		}
	}

	/** On close: deletes the segments kept for holds still open (snapshots fail then). */
	void closeAll() {
		List<Path> kept = release(false);
		if (kept != null) {
			deleteAll(kept);
		}
	}

	private void deleteAll(List<Path> segments) {
		for (Path segment : segments) {
			try {
				this.io.deleteIfExists(segment);
			}
			catch (IOException ex) {
				// Below the manifest's oldest live segment: the next start deletes it.
			}
		}
	}

}
