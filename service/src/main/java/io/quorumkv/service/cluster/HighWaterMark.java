package io.quorumkv.service.cluster;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.service.storage.ChecksummedFile;
import io.quorumkv.storage.StorageException;

/**
 * The clock's durable high-water mark: a timestamp that no stamp of this node exceeds,
 * kept in one file of the data folder ({@code <quorumkv.storage.path>/clock}).
 *
 * <pre>
 * payload := i64 mark      (microseconds, the hybrid logical clock's unit)
 * </pre>
 *
 * in a {@link ChecksummedFile} envelope (magic {@code QKVC}, version 1).
 *
 * <p>
 * Invariant: every stamp issued is at most {@link #reserved}, and the file holds at least
 * {@link #reserved} (it is raised before a stamp above it is handed out). So a restarted
 * node that starts above the file's mark never stamps below its earlier writes, whatever
 * its wall clock says. The mark is reserved ahead in steps: the file is written about
 * once per {@code step} of progress, by a thread of its own once half of the reservation
 * is used, and only on the stamping thread when that thread fell a whole half-step
 * behind. A graceful close writes the exact last stamp, so that a quick restart does not
 * start up to a step ahead of the wall clock. A mark that cannot be written fails the
 * stamp that needed it with a {@link StorageException} (answered 503): no stamp is handed
 * out uncovered.
 */
final class HighWaterMark implements AutoCloseable {

	static final int MAGIC = 0x514b5643;

	static final int VERSION = 1;

	private final ChecksummedFile file;

	private final long stepMicros;

	private final long recovered;

	private final ExecutorService writer = Executors
		.newSingleThreadExecutor(Thread.ofPlatform().name("quorumkv-clock").daemon().factory());

	private final AtomicBoolean renewing = new AtomicBoolean();

	private final AtomicLong writes = new AtomicLong();

	/** Every stamp issued is at most this; the file holds at least this. */
	private volatile long reserved;

	private HighWaterMark(ChecksummedFile file, long stepMicros, long recovered) {
		this.file = file;
		this.stepMicros = stepMicros;
		this.recovered = recovered;
		this.reserved = recovered;
	}

	/** Reads the mark of {@code path} ({@link Long#MIN_VALUE} when there is none). */
	static HighWaterMark open(Path path, Duration step) throws IOException {
		if (step.isNegative() || step.isZero()) {
			throw new IllegalArgumentException("the clock's reservation step must be positive");
		}
		ChecksummedFile file = new ChecksummedFile(path, MAGIC, VERSION);
		byte[] payload = file.read();
		long recovered = Long.MIN_VALUE;
		if (payload != null) {
			if (payload.length != Long.BYTES) {
				throw new IOException(path + ": clock mark of " + payload.length + " bytes, expected 8");
			}
			recovered = ByteBuffer.wrap(payload).getLong();
		}
		return new HighWaterMark(file, step.toNanos() / 1_000, recovered);
	}

	/** The mark found at open: every stamp of the node's earlier runs is at most this. */
	long recovered() {
		return this.recovered;
	}

	/** Makes sure {@code stamp} is covered before it is handed out. */
	void cover(long stamp) {
		long mark = this.reserved;
		if (stamp <= mark - this.stepMicros / 2) {
			return;
		}
		if (stamp <= mark) {
			renewSoon(stamp);
			return;
		}
		reserve(stamp);
	}

	/** Raises the mark to {@code stamp} plus a step, unless it already covers it. */
	synchronized void reserve(long stamp) {
		if (stamp <= this.reserved) {
			return;
		}
		long target = saturatedAdd(stamp, this.stepMicros);
		write(target);
		this.reserved = target;
	}

	private void renewSoon(long stamp) {
		if (!this.renewing.compareAndSet(false, true)) {
			return;
		}
		try {
			this.writer.execute(() -> {
				try {
					reserve(saturatedAdd(stamp, this.stepMicros / 2));
				}
				finally {
					this.renewing.set(false);
				}
			});
		}
		catch (RejectedExecutionException closed) {
			this.renewing.set(false);
		}
	}

	/** Times the file was written, for tests and metrics. */
	long writes() {
		return this.writes.get();
	}

	/**
	 * Stops the renewal thread and writes the exact last stamp; stamps issued after this
	 * raise the mark on the stamping thread.
	 */
	void close(long last) {
		// Not under the lock: a renewal running now takes it to finish.
		this.writer.shutdown();
		try {
			this.writer.awaitTermination(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		synchronized (this) {
			if (last > Long.MIN_VALUE && last < this.reserved) {
				write(last);
				this.reserved = last;
			}
		}
	}

	@Override
	public void close() {
		close(Long.MIN_VALUE);
	}

	private void write(long mark) {
		try {
			this.file.write(ByteBuffer.allocate(Long.BYTES).putLong(mark).array());
			this.writes.incrementAndGet();
		}
		catch (IOException ex) {
			// A storage failure (a full disk, say): the request that needed the stamp is
			// refused with a 503 to retry, as when the storage itself cannot write.
			throw new StorageException(
					"cannot write the clock's high-water mark to " + this.file.path() + ": " + ex.getMessage(), ex);
		}
	}

	private static long saturatedAdd(long a, long b) {
		long sum = a + b;
		return (((a ^ sum) & (b ^ sum)) < 0) ? Long.MAX_VALUE : sum;
	}

}
