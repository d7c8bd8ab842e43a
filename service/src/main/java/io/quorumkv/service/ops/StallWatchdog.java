package io.quorumkv.service.ops;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Says why a request waited long, while it happens: each event loop records every
 * {@code beat} that it runs (a task in its own timer queue), and a thread of its own
 * looks as often. A loop that has not run for {@code stall} is reported once, with its
 * stack and those of the storage engine's threads ({@code lsm-*}) and the node's own
 * ({@code quorumkv-*}): what it was blocked in. When the watchdog itself slept
 * {@code stall} longer than it asked, the whole JVM stood still (a collector's pause, a
 * safepoint, or a host that did not run the process), which the GC and safepoint log
 * tells apart; that is reported as such, without stacks (they would show the moment
 * after). Both are counted in {@code quorumkv.watchdog.stalls} (a timer tagged
 * {@code kind=event-loop|jvm}, the time at detection). Costs one timer task per loop per
 * beat and one thread that wakes as often: nothing on the request path.
 */
public final class StallWatchdog implements AutoCloseable {

	/** How deep each reported stack goes. */
	static final int STACK_DEPTH = 48;

	private static final Log logger = LogFactory.getLog(StallWatchdog.class);

	private final EventExecutor[] loops;

	private final long stallNanos;

	private final long beatNanos;

	private final AtomicLongArray beats;

	private final @Nullable Thread[] loopThreads;

	private final boolean[] reported;

	private final Timer loopStalls;

	private final Timer jvmStalls;

	private final Consumer<String> report;

	private final Pause pause;

	private final List<ScheduledFuture<?>> beating = new ArrayList<>();

	private volatile boolean running;

	private @Nullable Thread watcher;

	/** How the watchdog waits between looks; a test stands in for a JVM pause. */
	@FunctionalInterface
	interface Pause {

		void pause(long nanos) throws InterruptedException;

	}

	/**
	 * @param loops the node's event loops
	 * @param properties the stall and the beat
	 * @param meters where the stalls are counted
	 */
	public StallWatchdog(EventExecutor[] loops, WatchdogProperties properties, MeterRegistry meters) {
		this(loops, properties, meters, logger::warn, (nanos) -> TimeUnit.NANOSECONDS.sleep(nanos));
	}

	StallWatchdog(EventExecutor[] loops, WatchdogProperties properties, MeterRegistry meters, Consumer<String> report,
			Pause pause) {
		this.loops = loops.clone();
		this.stallNanos = properties.stall().toNanos();
		this.beatNanos = properties.beat().toNanos();
		this.beats = new AtomicLongArray(loops.length);
		this.loopThreads = new Thread[loops.length];
		this.reported = new boolean[loops.length];
		this.loopStalls = stalls(meters, "event-loop");
		this.jvmStalls = stalls(meters, "jvm");
		this.report = report;
		this.pause = pause;
	}

	private static Timer stalls(MeterRegistry meters, String kind) {
		return Timer.builder("quorumkv.watchdog.stalls")
			.description("Event loops that ran no task, or a JVM that stood still, for the watchdog's stall or longer")
			.tag("kind", kind)
			.register(meters);
	}

	/**
	 * Starts the beats on every loop and the watching thread; nothing when turned off.
	 */
	public synchronized void start() {
		if (this.running || this.stallNanos == 0) {
			return;
		}
		this.running = true;
		long now = System.nanoTime();
		for (int i = 0; i < this.loops.length; i++) {
			int index = i;
			this.beats.set(i, now);
			this.beating
				.add(this.loops[i].scheduleAtFixedRate(() -> beat(index), 0, this.beatNanos, TimeUnit.NANOSECONDS));
		}
		Thread thread = Thread.ofPlatform().name("quorumkv-watchdog").daemon().unstarted(this::watch);
		this.watcher = thread;
		thread.start();
	}

	private void beat(int index) {
		if (this.loopThreads[index] == null) {
			this.loopThreads[index] = Thread.currentThread();
		}
		this.beats.set(index, System.nanoTime());
	}

	private void watch() {
		long last = System.nanoTime();
		while (this.running) {
			try {
				this.pause.pause(this.beatNanos);
			}
			catch (InterruptedException ex) {
				return;
			}
			long now = System.nanoTime();
			long overslept = now - last - this.beatNanos;
			last = now;
			if (overslept >= this.stallNanos) {
				this.jvmStalls.record(overslept, TimeUnit.NANOSECONDS);
				this.report.accept("The JVM stood still for about " + millis(overslept)
						+ ": the watchdog slept that much longer than it asked. A collector's pause, a safepoint, "
						+ "or a host that did not run the process; the GC and safepoint log "
						+ "(-Xlog:gc*,safepoint) tells which");
				// The loops had no chance to beat either: look at them next time.
				continue;
			}
			look(now);
		}
	}

	private void look(long now) {
		for (int i = 0; i < this.loops.length; i++) {
			if (this.loops[i].isShuttingDown()) {
				// A loop that shuts down runs no more timer tasks: quiet, not stalled.
				continue;
			}
			long quiet = now - this.beats.get(i);
			if (quiet >= this.stallNanos && !this.reported[i]) {
				this.reported[i] = true;
				this.loopStalls.record(quiet, TimeUnit.NANOSECONDS);
				this.report.accept(loopReport(i, quiet));
			}
			else if (quiet < this.stallNanos && this.reported[i]) {
				this.reported[i] = false;
				this.report.accept("Event loop " + name(i) + " runs tasks again");
			}
		}
	}

	private String loopReport(int index, long quiet) {
		StringBuilder text = new StringBuilder("Event loop ").append(name(index))
			.append(" has run no task for ")
			.append(millis(quiet))
			.append(" (requests on its connections wait); the stacks of it and of the storage's and the node's own "
					+ "threads:");
		Thread loop = this.loopThreads[index];
		for (Map.Entry<Thread, StackTraceElement[]> thread : Thread.getAllStackTraces().entrySet()) {
			String name = thread.getKey().getName();
			if (thread.getKey() == loop || name.startsWith("lsm-")
					|| (name.startsWith("quorumkv-") && !name.equals("quorumkv-watchdog"))) {
				text.append("\n\"").append(name).append("\" ").append(thread.getKey().getState());
				StackTraceElement[] frames = thread.getValue();
				for (int f = 0; f < Math.min(frames.length, STACK_DEPTH); f++) {
					text.append("\n\tat ").append(frames[f]);
				}
				if (frames.length > STACK_DEPTH) {
					text.append("\n\t... ").append(frames.length - STACK_DEPTH).append(" more");
				}
			}
		}
		return text.toString();
	}

	private String name(int index) {
		Thread loop = this.loopThreads[index];
		return (loop != null) ? loop.getName() : "#" + index;
	}

	private static String millis(long nanos) {
		return Duration.ofNanos(nanos).toMillis() + " ms";
	}

	@Override
	public synchronized void close() {
		this.running = false;
		for (ScheduledFuture<?> beat : this.beating) {
			beat.cancel(false);
		}
		this.beating.clear();
		Thread thread = this.watcher;
		if (thread != null) {
			thread.interrupt();
			this.watcher = null;
		}
	}

}
