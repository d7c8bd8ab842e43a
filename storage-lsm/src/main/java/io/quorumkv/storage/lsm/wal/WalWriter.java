package io.quorumkv.storage.lsm.wal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
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
 */
public final class WalWriter implements AutoCloseable {

	private final Path path;

	private final long number;

	private final FileChannel channel;

	private final ReentrantLock writeLock = new ReentrantLock();

	private final Object syncLock = new Object();

	private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

	private volatile long writtenPosition;

	private volatile long syncedPosition;

	private boolean closed;

	private WalWriter(Path path, long number, FileChannel channel) {
		this.path = path;
		this.number = number;
		this.channel = channel;
	}

	/** Creates a new, empty segment. */
	public static WalWriter create(Path path, long number) throws IOException {
		FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
		return new WalWriter(path, number, channel);
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
		ByteBuffer[] buffers = new ByteBuffer[batch.size()];
		long position = this.writtenPosition;
		for (int i = 0; i < buffers.length; i++) {
			buffers[i] = ByteBuffer.wrap(batch.get(i).record);
			position += batch.get(i).record.length;
			batch.get(i).endPosition = position;
		}
		long left = position - this.writtenPosition;
		try {
			while (left > 0) {
				left -= this.channel.write(buffers);
			}
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
			this.channel.force(false);
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
					this.channel.close();
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
