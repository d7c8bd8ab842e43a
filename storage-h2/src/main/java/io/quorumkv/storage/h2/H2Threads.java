package io.quorumkv.storage.h2;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The threads H2's blocking calls run on: a fixed pool with a bounded queue (a full queue
 * rejects, which is an overload) wrapped as a Reactor {@link Scheduler}, and one timer
 * thread for the periodic sync.
 *
 * <p>
 * Why not {@code Schedulers.newBoundedElastic}: Reactor cancels a running task of an
 * {@code ExecutorService}-backed scheduler by interrupting its thread, and an interrupt
 * during H2's file I/O closes the {@code FileChannel} (NIO's
 * {@code ClosedByInterruptException}), which breaks the whole database. A scheduler made
 * with {@link Schedulers#fromExecutor} over a plain {@link Executor} never interrupts,
 * and the timer is stopped with {@code shutdown()}, never {@code shutdownNow()}.
 */
final class H2Threads {

	private final ThreadPoolExecutor workers;

	private final Scheduler scheduler;

	private final ScheduledExecutorService timer;

	H2Threads(int threads, int queueCapacity) {
		this.workers = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
				new ArrayBlockingQueue<>(queueCapacity), daemonThreads("quorumkv-h2-"));
		this.workers.allowCoreThreadTimeOut(true);
		// A plain Executor, not the ExecutorService: Schedulers.fromExecutor would treat
		// an
		// ExecutorService as fromExecutorService, whose cancel interrupts.
		Executor noInterrupts = this.workers::execute;
		this.scheduler = Schedulers.fromExecutor(noInterrupts);
		this.timer = Executors.newSingleThreadScheduledExecutor(daemonThreads("quorumkv-h2-sync-"));
	}

	Scheduler scheduler() {
		return this.scheduler;
	}

	void schedulePeriodically(Runnable task, long periodMillis) {
		this.timer.scheduleWithFixedDelay(task, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
	}

	/** Stops the periodic task; one that is running completes (no interrupt). */
	void stopTimer() {
		this.timer.shutdown();
	}

	/** Stops accepting work; running statements complete (no interrupt). */
	void shutdown() {
		this.timer.shutdown();
		this.scheduler.dispose();
		this.workers.shutdown();
	}

	private static ThreadFactory daemonThreads(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

}
