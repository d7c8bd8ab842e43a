package io.quorumkv.storage.lsm.wal;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * Appends records to one WAL segment with group writes: concurrent appenders queue their
 * records and whoever holds the write lock writes every queued record in one gathering
 * write (leader/follower), so a burst of writers costs one system call. An append returns
 * once its record is in the operating system (page cache); {@link #sync()} forces it to
 * the disk and is called by the {@link Syncer} only, never by an event loop.
 *
 * <p>
 * Written through a {@link FileOutputStream}, not a {@code FileChannel}: an interrupted
 * thread closes an interruptible channel for everyone, and a caller's thread may be
 * interrupted (a cancelled task) in the middle of an append.
 */
public final class WalWriter implements AutoCloseable {

	private final Path path;

	private final long number;

	private final FileOutputStream out;

	private final ReentrantLock writeLock = new ReentrantLock();

	private final Object syncLock = new Object();

	private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

	private volatile long writtenPosition;

	private volatile long syncedPosition;

	private boolean closed;

	/** Guarded by the sync lock. */
	private boolean directorySynced;

	private WalWriter(Path path, long number, FileOutputStream out) {
		this.path = path;
		this.number = number;
		this.out = out;
	}

	/** Creates a new, empty segment; fails if the file exists. */
	public static WalWriter create(Path path, long number) throws IOException {
		Files.createFile(path);
		return new WalWriter(path, number, new FileOutputStream(path.toFile(), true));
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
	 * Appends one encoded record and returns the log position after it, once it was
	 * written to the operating system.
	 */
	public long append(byte[] record) throws IOException {
		Pending mine = new Pending(record);
		this.queue.add(mine);
		this.writeLock.lock();
		try {
			if (!mine.written && mine.failure == null) {
				writeQueued();
			}
			if (mine.failure != null) {
				throw new IOException("WAL append to " + this.path + " failed", mine.failure);
			}
			return mine.endPosition;
		}
		finally {
			this.writeLock.unlock();
		}
	}

	private void writeQueued() throws IOException {
		assert this.writeLock.isHeldByCurrentThread();
		if (this.closed) {
			throw new IOException("WAL segment " + this.path + " is closed");
		}
		List<Pending> batch = new ArrayList<>();
		for (Pending p = this.queue.poll(); p != null; p = this.queue.poll()) {
			batch.add(p);
		}
		long position = this.writtenPosition;
		int total = 0;
		for (Pending p : batch) {
			total += p.record.length;
		}
		byte[] buffer = (batch.size() == 1) ? batch.get(0).record : new byte[total];
		int offset = 0;
		for (Pending p : batch) {
			if (buffer != p.record) {
				System.arraycopy(p.record, 0, buffer, offset, p.record.length);
			}
			offset += p.record.length;
			position += p.record.length;
			p.endPosition = position;
		}
		try {
			this.out.write(buffer);
		}
		catch (IOException ex) {
			// The followers whose records were in this batch fail with the leader.
			for (Pending p : batch) {
				p.failure = ex;
			}
			throw ex;
		}
		this.writtenPosition = position;
		for (Pending p : batch) {
			p.written = true;
		}
	}

	/** Forces everything written so far to the disk; a no-op once closed. */
	public void sync() throws IOException {
		synchronized (this.syncLock) {
			long position = this.writtenPosition;
			if (this.closed || position <= this.syncedPosition) {
				return;
			}
			if (!this.directorySynced) {
				// A new file's name is durable only once its folder is forced.
				try (FileChannel dir = FileChannel.open(this.path.getParent(), StandardOpenOption.READ)) {
					dir.force(true);
				}
				this.directorySynced = true;
			}
			this.out.getFD().sync();
			this.syncedPosition = position;
		}
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

	private static final class Pending {

		final byte[] record;

		/** Guarded by the write lock. */
		boolean written;

		/** Guarded by the write lock. */
		long endPosition;

		/** Guarded by the write lock. */
		@Nullable IOException failure;

		Pending(byte[] record) {
			this.record = record;
		}

	}

}
