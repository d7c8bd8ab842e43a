package io.quorumkv.storage.lsm.wal;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;

/**
 * Appends records to one WAL segment with group writes: concurrent appenders queue their
 * records and whoever holds the write lock writes every queued record in one gathering
 * write (leader/follower), so a burst of writers costs one system call. Entries are
 * encoded by that writer into one buffer it keeps for the next batch, so an append
 * allocates no record of its own (young collections are what set the tail latency at a
 * constant rate: docs/performance.md, "GC pauses"). An append returns once its record is
 * in the operating system (page cache); {@link #sync()} forces it to the disk and is
 * called by the {@link Syncer} only, never by an event loop.
 *
 * <p>
 * A failed {@code fsync} is final for the segment (PostgreSQL's "fsyncgate", 2018): Linux
 * may have dropped the unsynced pages and reports the next {@code fsync} a success, so
 * every later {@link #sync()} fails with the first failure, nothing more is appended, and
 * the segment is cut back to its last synced length, so that no later record follows a
 * hole (recovery would take that for damage).
 *
 * <p>
 * Written through {@link FileIo}, whose real files are not interruptible channels: an
 * interrupted thread closes an interruptible channel for everyone, and a caller's thread
 * may be interrupted (a cancelled task) in the middle of an append.
 */
public final class WalWriter implements AutoCloseable {

	private static final System.Logger LOG = System.getLogger(WalWriter.class.getName());

	private final Path path;

	private final long number;

	private final FileIo io;

	private final AppendFile out;

	private final ReentrantLock writeLock = new ReentrantLock();

	private final Object syncLock = new Object();

	/**
	 * Batches up to this size are encoded into the kept buffer; larger ones get their
	 * own.
	 */
	static final int KEPT_BUFFER_LIMIT = 256 * 1024;

	private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

	/** Guarded by the write lock. */
	private final ArrayList<Pending> batch = new ArrayList<>();

	/** Guarded by the write lock. */
	private byte[] buffer = new byte[4096];

	private volatile long writtenPosition;

	private volatile long syncedPosition;

	private boolean closed;

	/**
	 * The write (or force) that failed, after which nothing more is appended: a write may
	 * have landed part of its records, which must stay the last bytes of the segment
	 * (only the last record may be torn; anything after it would make it damage). Guarded
	 * by the write lock.
	 */
	private @Nullable IOException failed;

	/** Guarded by the sync lock. */
	private boolean directorySynced;

	/** The first failed force of the segment (or its folder); sticky. */
	private volatile @Nullable IOException syncFailed;

	private WalWriter(FileIo io, Path path, long number, AppendFile out) {
		this.io = io;
		this.path = path;
		this.number = number;
		this.out = out;
	}

	/** Creates a new, empty segment; fails if the file exists. */
	public static WalWriter create(FileIo io, Path path, long number) throws IOException {
		return new WalWriter(io, path, number, io.createNew(path));
	}

	public Path path() {
		return this.path;
	}

	public long number() {
		return this.number;
	}

	public long writtenPosition() {
		return this.writtenPosition;
	}

	/**
	 * Appends {@code entry}'s record ({@link WalRecord}) and returns the log position
	 * after it, once it was written to the operating system.
	 */
	public long append(Entry entry) throws IOException {
		Pending mine = new Pending(entry);
		this.queue.add(mine);
		return await(mine, null);
	}

	/**
	 * Appends the records of {@code entries}, in their order, in one write with whatever
	 * else is queued (a replica's batch costs one system call, not one per entry), and
	 * returns the log position after the last, once all were written to the operating
	 * system.
	 */
	public long appendAll(List<Entry> entries) throws IOException {
		if (entries.isEmpty()) {
			return this.writtenPosition;
		}
		if (entries.size() == 1) {
			// A single upsert's path: no array of pendings to check.
			return append(entries.get(0));
		}
		Pending[] mine = new Pending[entries.size()];
		for (int i = 0; i < mine.length; i++) {
			mine[i] = new Pending(entries.get(i));
		}
		// Queued one by one: another appender's records may come between them, which
		// costs nothing (the queue drains whole, in order, into one write per leader).
		for (Pending pending : mine) {
			this.queue.add(pending);
		}
		return await(mine[mine.length - 1], mine);
	}

	/**
	 * Waits until {@code last} (queued after all of {@code all}) is written, writing the
	 * queue itself when no other appender does, and fails if any of them failed.
	 */
	private long await(Pending last, Pending @Nullable [] all) throws IOException {
		this.writeLock.lock();
		try {
			if (!last.written && last.failure == null) {
				writeQueued();
			}
			// The queue drains in order: once the last record is written or failed, so
			// is every one queued before it.
			if (all != null) {
				for (Pending pending : all) {
					failIfFailed(pending);
				}
			}
			failIfFailed(last);
			return last.endPosition;
		}
		finally {
			this.writeLock.unlock();
		}
	}

	private void failIfFailed(Pending pending) throws IOException {
		if (pending.failure != null) {
			throw new IOException("WAL append to " + this.path + " failed", pending.failure);
		}
	}

	private void writeQueued() throws IOException {
		assert this.writeLock.isHeldByCurrentThread();
		if (this.closed) {
			throw new IOException("WAL segment " + this.path + " is closed");
		}
		ArrayList<Pending> batch = this.batch;
		try {
			long total = 0;
			for (Pending p = this.queue.poll(); p != null; p = this.queue.poll()) {
				batch.add(p);
				total += p.size;
			}
			if (this.failed != null) {
				IOException refused = new IOException(
						"WAL segment " + this.path + " failed earlier; nothing more is appended to it", this.failed);
				for (Pending p : batch) {
					p.failure = refused;
				}
				throw refused;
			}
			long position = this.writtenPosition;
			try {
				byte[] out = buffer(total);
				int offset = 0;
				for (Pending p : batch) {
					offset = WalRecord.encode(p.entry, out, offset);
					position += p.size;
					p.endPosition = position;
				}
				this.out.write(out, 0, offset);
			}
			catch (IOException | RuntimeException ex) {
				// The followers whose records were in this batch fail with the leader.
				IOException failure = (ex instanceof IOException io) ? io
						: new IOException("WAL batch could not be encoded", ex);
				for (Pending p : batch) {
					p.failure = failure;
				}
				this.failed = failure;
				throw failure;
			}
			this.writtenPosition = position;
			for (Pending p : batch) {
				p.written = true;
			}
		}
		finally {
			batch.clear();
		}
	}

	private byte[] buffer(long total) throws IOException {
		if (total > Integer.MAX_VALUE - 16) {
			throw new IOException("WAL batch of " + total + " bytes is too large");
		}
		if (total > KEPT_BUFFER_LIMIT) {
			return new byte[(int) total];
		}
		if (total > this.buffer.length) {
			this.buffer = new byte[(int) Math.min(KEPT_BUFFER_LIMIT, Math.max(total, 2L * this.buffer.length))];
		}
		return this.buffer;
	}

	/**
	 * Forces everything written so far to the disk; a no-op once closed. Once a force
	 * failed, fails with that failure, every time.
	 */
	public void sync() throws IOException {
		IOException failure;
		synchronized (this.syncLock) {
			failIfSyncFailed();
			long position = this.writtenPosition;
			if (this.closed || position <= this.syncedPosition) {
				return;
			}
			try {
				if (!this.directorySynced) {
					// A new file's name is durable only once its folder is forced.
					this.io.syncDirectory(this.path.getParent());
					this.directorySynced = true;
				}
				this.out.sync();
				this.syncedPosition = position;
				return;
			}
			catch (IOException ex) {
				failure = ex;
				this.syncFailed = ex;
			}
		}
		// Outside the sync lock: close() takes the write lock, then the sync lock.
		cutBack(failure);
		throw failure;
	}

	private void failIfSyncFailed() throws IOException {
		IOException failure = this.syncFailed;
		if (failure != null) {
			throw new IOException("an earlier fsync of WAL segment " + this.path
					+ " failed; its unsynced records may be lost, and no later fsync can tell", failure);
		}
	}

	/**
	 * After a failed force: refuses every later append and cuts the segment back to its
	 * last synced length. What the kernel dropped is gone either way; records appended
	 * meanwhile (none acknowledged as durable) would follow a hole.
	 */
	private void cutBack(IOException failure) {
		this.writeLock.lock();
		try {
			if (this.failed == null) {
				this.failed = failure;
			}
			long written = this.writtenPosition;
			this.io.truncate(this.path, this.syncedPosition);
			if (written > this.syncedPosition) {
				// Said here, since the store's failure shown may be an earlier one: with
				// INTERVAL or NEVER, writes acknowledged since the last force are gone.
				LOG.log(System.Logger.Level.WARNING,
						"WAL segment {0} cut back from {1} to {2} bytes after its fsync failed ({3}): the records"
								+ " written since its last successful fsync are dropped",
						this.path, written, this.syncedPosition, failure.getMessage());
			}
		}
		catch (IOException ex) {
			failure.addSuppressed(ex);
		}
		finally {
			this.writeLock.unlock();
		}
	}

	/** Whether records were written that no force has covered yet. */
	public boolean hasUnsynced() {
		return this.writtenPosition > this.syncedPosition;
	}

	public boolean isSyncedTo(long position) {
		return this.syncedPosition >= position;
	}

	@Override
	public void close() throws IOException {
		this.writeLock.lock();
		try {
			synchronized (this.syncLock) {
				if (!this.closed) {
					this.closed = true;
					this.out.close();
				}
			}
		}
		finally {
			this.writeLock.unlock();
		}
	}

	/** A queued entry, encoded by whoever writes its batch. */
	private static final class Pending {

		final Entry entry;

		final int size;

		/** Guarded by the write lock. */
		boolean written;

		/** Guarded by the write lock. */
		long endPosition;

		/** Guarded by the write lock. */
		@Nullable IOException failure;

		Pending(Entry entry) {
			this.entry = entry;
			this.size = WalRecord.encodedSize(entry);
		}

	}

}
