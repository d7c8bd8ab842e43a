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
 * acknowledged before the memtable was frozen.
 */
public final class Syncer implements AutoCloseable {

	private final LinkedBlockingQueue<Request> queue = new LinkedBlockingQueue<>();

	private final Supplier<List<WalWriter>> live;

	private final @Nullable Duration period;

	private final Consumer<Throwable> onFailure;

	private final Thread thread;

	private volatile boolean running = true;

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

	private void run() {
		long periodNanos = (this.period != null) ? this.period.toNanos() : TimeUnit.SECONDS.toNanos(1);
		long nextTick = System.nanoTime() + periodNanos;
		List<Request> batch = new ArrayList<>();
		while (true) {
			Request first = null;
			try {
				first = this.running ? this.queue.poll(Math.max(0, nextTick - System.nanoTime()), TimeUnit.NANOSECONDS)
						: this.queue.poll();
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
			if (System.nanoTime() - nextTick >= 0) {
				nextTick = System.nanoTime() + periodNanos;
				if (this.period != null && this.running) {
					writers.addAll(this.live.get());
				}
			}
			syncAll(writers, batch);
			batch.clear();
			if (!this.running && this.queue.isEmpty()) {
				break;
			}
		}
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
