package io.quorumkv.service.nemesis;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Injects faults one after another on a thread of its own: each {@link Fault} starts,
 * holds, is healed, and is recorded as a window in the {@link History}; a quiet gap
 * follows. The faults come from a plan (a fixed list, or drawn from a seeded random);
 * {@link #stop} lets the current fault heal before returning.
 */
final class Nemesis {

	private final NemesisNodes nodes;

	private final History history;

	private final Supplier<@Nullable Fault> plan;

	private final long holdMillis;

	private final long quietMillis;

	private final AtomicBoolean stopped = new AtomicBoolean();

	private final Map<String, Integer> injected = new TreeMap<>();

	private @Nullable Thread thread;

	private volatile @Nullable Throwable failure;

	/**
	 * @param plan the next fault, or null when the plan is done
	 */
	Nemesis(NemesisNodes nodes, History history, Supplier<@Nullable Fault> plan, long holdMillis, long quietMillis) {
		this.nodes = nodes;
		this.history = history;
		this.plan = plan;
		this.holdMillis = holdMillis;
		this.quietMillis = quietMillis;
	}

	void start() {
		this.thread = Thread.ofPlatform().name("nemesis").daemon().start(this::loop);
	}

	/**
	 * Whether the plan ran out (or failed) after injecting a fault at least; a run
	 * without faults lasts its whole duration.
	 */
	boolean done() {
		Thread t = this.thread;
		return t != null && !t.isAlive() && (this.failure != null || !injected().isEmpty());
	}

	private void loop() {
		try {
			for (int n = 0; n < 100_000 && !this.stopped.get(); n++) {
				Fault fault = this.plan.get();
				if (fault == null) {
					return;
				}
				long start = System.nanoTime();
				System.out.println("Nemesis: " + fault.describe());
				try {
					fault.start(this.nodes);
					sleepUnlessStopped(fault.holdMillis(this.holdMillis));
				}
				finally {
					fault.stop(this.nodes);
					long end = System.nanoTime();
					this.history.window(fault.describe(), start, end);
					synchronized (this.injected) {
						this.injected.merge(fault.describe().split(" ", 2)[0], 1, Integer::sum);
					}
					System.out
						.println("Nemesis: healed " + fault.describe() + " after " + (end - start) / 1_000_000 + " ms");
				}
				sleepUnlessStopped(this.quietMillis);
			}
		}
		catch (RuntimeException | Error ex) {
			this.failure = ex;
			System.out.println("Nemesis failed: " + ex);
		}
	}

	private void sleepUnlessStopped(long millis) {
		long deadline = System.nanoTime() + millis * 1_000_000;
		while (!this.stopped.get() && System.nanoTime() < deadline) {
			Pause.millis(Math.min(100, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
		}
	}

	/** Stops after healing the current fault (its restart included), bounded. */
	void stop() {
		this.stopped.set(true);
		Thread t = this.thread;
		if (t != null) {
			try {
				t.join(300_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** Faults injected, by kind. */
	Map<String, Integer> injected() {
		synchronized (this.injected) {
			return Map.copyOf(this.injected);
		}
	}

	@Nullable Throwable failure() {
		return this.failure;
	}

}
