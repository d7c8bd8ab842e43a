package io.quorumkv.storage.derby;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.storage.StorageClosedException;
import io.quorumkv.storage.StorageOverloadedException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The bounded executor every JDBC call of one store runs on, exposed as a Reactor
 * {@link Scheduler}.
 *
 * <p>
 * It has as many platform threads as the pool has connections, so a running task never
 * waits for a connection, and a bounded queue in front of them. When the queue is full a
 * call fails at once with {@link StorageOverloadedException} (the service answers 503)
 * instead of queueing without bound. The scheduler wraps the executor with
 * {@link Schedulers#fromExecutor}, which never interrupts a running task on cancel: an
 * interrupted Derby call can fail its statement or close its connection (SQLState 08000),
 * while a task left to finish releases its connection in its own
 * {@code try}-with-resources.
 */
final class JdbcExecutor {

	static final String THREAD_PREFIX = "quorumkv-derby-jdbc-";

	private final ThreadPoolExecutor executor;

	private final Scheduler scheduler;

	/** Calls running or queued; at most {@link #maxAdmitted}. */
	private final AtomicInteger admitted = new AtomicInteger();

	private final int maxAdmitted;

	/** Test hook run on the JDBC thread before each task; null in production. */
	private volatile @Nullable Runnable beforeTask;

	JdbcExecutor(int threads, int maxQueued) {
		this.executor = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
				new ArrayBlockingQueue<>(maxQueued), new NamedDaemonThreads(), new ThreadPoolExecutor.AbortPolicy());
		this.scheduler = Schedulers.fromExecutor(this.executor);
		this.maxAdmitted = threads + maxQueued;
	}

	/**
	 * A lazy {@link Mono} of {@code work}, run on this executor: {@code subscribeOn}
	 * follows the source directly, so nothing of it runs on the subscriber's thread.
	 * Refused at once when the queue is full. A {@code null} result completes empty.
	 */
	<T> Mono<T> call(Callable<@Nullable T> work) {
		return Mono.defer(() -> {
			if (this.executor.isShutdown()) {
				return Mono.error(new StorageClosedException(DerbyStorage.BACKEND));
			}
			// Counted before scheduling, without the queue's lock (callers are event
			// loops): the executor's own rejection would still be mapped, but Reactor
			// logs every rejected task as an error.
			if (this.admitted.incrementAndGet() > this.maxAdmitted) {
				this.admitted.decrementAndGet();
				return Mono.error(new StorageOverloadedException(
						"derby JDBC executor queue is full (" + this.maxAdmitted + " calls running or queued)"));
			}
			return Mono.fromCallable(() -> run(work))
				.subscribeOn(this.scheduler)
				.doFinally((signal) -> this.admitted.decrementAndGet());
		}).onErrorMap(SqlFailures::map);
	}

	private <T> @Nullable T run(Callable<@Nullable T> work) throws Exception {
		Runnable hook = this.beforeTask;
		if (hook != null) {
			hook.run();
		}
		return work.call();
	}

	void beforeTask(@Nullable Runnable hook) {
		this.beforeTask = hook;
	}

	int queued() {
		return this.executor.getQueue().size();
	}

	int active() {
		return this.executor.getActiveCount();
	}

	/** Stops taking tasks, lets running and queued ones finish (bounded wait). */
	void shutdown() {
		this.executor.shutdown();
		try {
			if (!this.executor.awaitTermination(30, TimeUnit.SECONDS)) {
				this.executor.shutdownNow();
			}
		}
		catch (InterruptedException ex) {
			this.executor.shutdownNow();
			Thread.currentThread().interrupt();
		}
		this.scheduler.dispose();
	}

	private static final class NamedDaemonThreads implements ThreadFactory {

		private static final AtomicInteger COUNT = new AtomicInteger();

		@Override
		public Thread newThread(Runnable task) {
			Thread thread = new Thread(task, THREAD_PREFIX + COUNT.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		}

	}

}
