package io.quorumkv.storage.lsm.wal;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The dedicated thread that forces WAL segments to disk (group commit). Requests that
 * arrive while a force is running are served together by the next one, so N concurrent
 * {@code ALWAYS} writers cost about one {@code fsync} per round, and no caller thread (an
 * event loop) ever waits for the disk: the returned futures complete on this thread. With
 * a period it also forces every live segment periodically ({@code INTERVAL}): the active
 * one and those of frozen memtables whose flush has not finished, which may hold writes
 * acknowledged before the memtable was frozen. A period that finds nothing to force puts
 * the thread to rest until the next write ({@link #written()}) or request, so an idle
 * engine costs no wake-ups.
 */
public final class Syncer implements AutoCloseable {

	private final LinkedBlockingQueue<Request> queue = new LinkedBlockingQueue<>();

	private final Supplier<List<WalWriter>> live;

	private final @Nullable Duration period;

	private final Consumer<Throwable> onFailure;

	private final Thread thread;

	private volatile boolean running = true;

	/**
	 * Whether the periodic sync rests: set by the syncer after a period found nothing to
	 * force, cleared by the first {@link #written()} after it (which wakes the thread).
	 */
	private final AtomicBoolean resting = new AtomicBoolean();

	/**
	 * @param live the segments the periodic sync forces
	 * @param period the periodic sync's period, or {@code null} for none
	 * @param onFailure told about a failed force (the engine makes it sticky)
	 */
	public Syncer(String name, Supplier<List<WalWriter>> live, @Nullable Duration period,
			Consumer<Throwable> onFailure) {
		this.live = live;
		this.period = period;
		this.onFailure = onFailure;
		this.thread = Thread.ofPlatform().name(name).daemon().unstarted(this::run);
		this.thread.start();
	}

	/**
	 * Forces {@code writers} up to their current position; completes on the syncer
	 * thread.
	 */
	public CompletableFuture<Void> request(List<WalWriter> writers) {
		Request request = new Request(writers, new CompletableFuture<>());
		if (!this.running) {
			request.done.completeExceptionally(new IOException("WAL syncer is stopped"));
			return request.done;
		}
		this.queue.add(request);
		if (!this.running && this.queue.remove(request)) {
			request.done.completeExceptionally(new IOException("WAL syncer is stopped"));
		}
		return request.done;
	}

	/**
	 * Tells the periodic sync that a record was appended; wakes it if it rests. Costs a
	 * volatile read while it does not.
	 */
	public void written() {
		if (this.resting.get() && this.resting.compareAndSet(true, false)) {
			this.queue.add(new Request(List.of(), new CompletableFuture<>()));
		}
	}

	private void run() {
		long periodNanos = (this.period != null) ? this.period.toNanos() : 0;
		long nextTick = System.nanoTime() + periodNanos;
		List<Request> batch = new ArrayList<>();
		while (true) {
			Request first = null;
			try {
				if (!this.running) {
					first = this.queue.poll();
				}
				else if (this.period == null || this.resting.get()) {
					first = this.queue.take();
					// A write or a request ends the rest: the next period starts now.
					this.resting.set(false);
					nextTick = System.nanoTime() + periodNanos;
				}
				else {
					first = this.queue.poll(Math.max(0, nextTick - System.nanoTime()), TimeUnit.NANOSECONDS);
				}
			}
			catch (InterruptedException ex) {
				// close() wakes us up: serve what is queued, then stop.
			}
			if (first != null) {
				batch.add(first);
				this.queue.drainTo(batch);
			}
			Set<WalWriter> writers = new LinkedHashSet<>();
			for (Request r : batch) {
				writers.addAll(r.writers);
			}
			if (this.period != null && this.running && System.nanoTime() - nextTick >= 0) {
				nextTick = System.nanoTime() + periodNanos;
				List<WalWriter> segments = this.live.get();
				if (anyUnsynced(segments)) {
					writers.addAll(segments);
				}
				else {
					rest();
				}
			}
			syncAll(writers, batch);
			batch.clear();
			if (!this.running && this.queue.isEmpty()) {
				break;
			}
		}
	}

	/**
	 * Rests until the next write. A writer appends, then reads {@link #resting}; this
	 * sets it, then reads the segments again: one of the two sees the other, so a write
	 * is never left without a period.
	 */
	private void rest() {
		this.resting.set(true);
		if (anyUnsynced(this.live.get())) {
			this.resting.set(false);
		}
	}

	private static boolean anyUnsynced(List<WalWriter> segments) {
		for (WalWriter segment : segments) {
			if (segment.hasUnsynced()) {
				return true;
			}
		}
		return false;
	}

	private void syncAll(Set<WalWriter> writers, List<Request> batch) {
		try {
			for (WalWriter writer : writers) {
				writer.sync();
			}
			for (Request r : batch) {
				r.done.complete(null);
			}
		}
		catch (IOException | RuntimeException ex) {
			this.onFailure.accept(ex);
			for (Request r : batch) {
				r.done.completeExceptionally(ex);
			}
		}
	}

	/** Serves the queued requests, then stops the thread. */
	@Override
	public void close() {
		this.running = false;
		this.thread.interrupt();
		try {
			this.thread.join(TimeUnit.SECONDS.toMillis(30));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private record Request(List<WalWriter> writers, CompletableFuture<Void> done) {
	}

}
