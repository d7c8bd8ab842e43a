package io.quorumkv.service.peer;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Timers for deadlines on the event loop that arms them. A timer of Reactor's parallel
 * scheduler lives in a {@code ScheduledThreadPoolExecutor}: arming one takes that queue's
 * lock and wakes its worker thread, which wakes again when the timer is cancelled, for
 * every replica batch call (its time limiter) — about 3% of the coordinator's CPU samples
 * at three nodes and two extra thread wake-ups per call on cores the nodes share
 * (docs/performance.md). A timer armed on the current Netty event loop goes into that
 * loop's own timer queue, with no lock and no wake-up; a cancellation from another thread
 * is queued lazily, without waking the loop either. Off an event loop (a JDBC worker, a
 * test thread) the timer goes to Reactor's parallel scheduler, looked up at each call
 * (tests may replace it).
 *
 * <p>
 * Only {@link #schedule(Runnable, long, TimeUnit)} is the event loop's; immediate tasks
 * and workers are the parallel scheduler's, and disposing this one never shuts down a
 * loop.
 */
public final class EventLoopTimers implements Scheduler {

	/** The loops, copied once: finding the current one is a few thread comparisons. */
	private final EventExecutor[] loops;

	/**
	 * @param loops the node's event loops (the server's; the peer client runs on them)
	 */
	public EventLoopTimers(EventExecutorGroup loops) {
		this.loops = EventLoops.of(loops);
	}

	@Override
	public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
		EventExecutor loop = currentLoop();
		if (loop != null && !loop.isShuttingDown()) {
			try {
				ScheduledFuture<?> timer = loop.schedule(task, delay, unit);
				return new Armed(timer);
			}
			catch (RejectedExecutionException ex) {
				// The loop began to shut down after the check: a parallel timer will do.
			}
		}
		return Schedulers.parallel().schedule(task, delay, unit);
	}

	/** The loop running the calling thread, or null off the loops. */
	public @Nullable EventExecutor currentLoop() {
		int index = currentIndex();
		return (index >= 0) ? this.loops[index] : null;
	}

	/** The number of the node's event loops. */
	public int loopCount() {
		return this.loops.length;
	}

	/** The index of the loop running the calling thread, or -1 off the loops. */
	public int currentIndex() {
		return EventLoops.indexOfCurrent(this.loops);
	}

	/** The loops, in the order of {@link #currentIndex()}: a copy. */
	public EventExecutor[] loops() {
		return this.loops.clone();
	}

	/** The loop of {@code index}, as {@link #currentIndex()} numbers them. */
	public EventExecutor loop(int index) {
		return this.loops[index];
	}

	@Override
	public Disposable schedule(Runnable task) {
		return Schedulers.parallel().schedule(task);
	}

	@Override
	public Worker createWorker() {
		return Schedulers.parallel().createWorker();
	}

	private record Armed(ScheduledFuture<?> timer) implements Disposable {

		@Override
		public void dispose() {
			this.timer.cancel(false);
		}

		@Override
		public boolean isDisposed() {
			return this.timer.isDone();
		}

	}

}
