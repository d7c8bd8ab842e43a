package io.quorumkv.service.peer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;

/**
 * The node's event loops as an array: finding the current one is a few thread
 * comparisons.
 */
public final class EventLoops {

	private EventLoops() {
	}

	public static EventExecutor[] of(EventExecutorGroup group) {
		List<EventExecutor> all = new ArrayList<>();
		group.forEach(all::add);
		return all.toArray(EventExecutor[]::new);
	}

	/** The index of the loop running the calling thread, or -1 off the loops. */
	public static int indexOfCurrent(EventExecutor[] loops) {
		for (int i = 0; i < loops.length; i++) {
			if (loops[i].inEventLoop()) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * Runs {@code task} after the current turn of {@code loop}, the calling thread's own
	 * (queued without a wake-up, run once the turn's reading is done); at once when the
	 * loop is shutting down and will have no later turn.
	 */
	public static void afterTurn(EventExecutor loop, Runnable task) {
		try {
			loop.execute(task);
		}
		catch (RejectedExecutionException ex) {
			task.run();
		}
	}

	public static int indexOf(EventExecutor[] loops, EventExecutor loop) {
		for (int i = 0; i < loops.length; i++) {
			if (loops[i] == loop) {
				return i;
			}
		}
		throw new IllegalArgumentException(loop + " is none of the node's loops");
	}

}
