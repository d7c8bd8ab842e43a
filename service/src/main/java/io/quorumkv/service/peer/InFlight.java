package io.quorumkv.service.peer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.EventExecutor;
import org.jspecify.annotations.Nullable;

/**
 * The operations in flight on one replica stream ({@link PeerStream}): by id, to match
 * answers, and in the order of their deadlines, which is the order they were sent in (one
 * timeout for all). One timer, armed for the first, sweeps them; answered ones leave the
 * front as soon as they reach it. A timer per operation cost a schedule and a cancel of
 * the loop's timer queue per replica operation. Owned by the stream's loop.
 */
final class InFlight {

	private final IntObjectHashMap<StreamOperation> byId = new IntObjectHashMap<>();

	private final ArrayDeque<StreamOperation> byDeadline = new ArrayDeque<>();

	private final EventExecutor loop;

	private final long timeoutNanos;

	private final Consumer<StreamOperation> expired;

	private @Nullable ScheduledFuture<?> sweep;

	private int nextId;

	/**
	 * @param expired called, on the loop, with each operation whose deadline passed
	 * unanswered (already marked done and out of this set)
	 */
	InFlight(EventExecutor loop, long timeoutNanos, Consumer<StreamOperation> expired) {
		this.loop = loop;
		this.timeoutNanos = timeoutNanos;
		this.expired = expired;
	}

	int size() {
		return this.byId.size();
	}

	boolean isEmpty() {
		return this.byId.isEmpty();
	}

	/**
	 * Gives {@code operation} an id no operation in flight has, and starts its deadline.
	 */
	void add(StreamOperation operation) {
		do {
			operation.id = this.nextId++;
		}
		while (this.byId.containsKey(operation.id));
		this.byId.put(operation.id, operation);
		this.byDeadline.addLast(operation);
		if (this.sweep == null) {
			armSweep(this.timeoutNanos);
		}
	}

	/**
	 * The operation the answer {@code id} is for, now done and out of this set; null when
	 * there is none (its deadline passed first: it has been answered with a timeout).
	 */
	@Nullable StreamOperation answered(int id) {
		StreamOperation operation = this.byId.remove(id);
		if (operation == null) {
			return null;
		}
		operation.done = true;
		StreamOperation first = this.byDeadline.peekFirst();
		while (first != null && first.done) {
			this.byDeadline.pollFirst();
			first = this.byDeadline.peekFirst();
		}
		return operation;
	}

	/** Every operation in flight, each marked done; the set is empty after. */
	List<StreamOperation> removeAll() {
		List<StreamOperation> all = new ArrayList<>(this.byId.values());
		this.byId.clear();
		this.byDeadline.clear();
		for (StreamOperation operation : all) {
			operation.done = true;
		}
		return all;
	}

	private void armSweep(long delayNanos) {
		this.sweep = this.loop.schedule(this::sweep, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
	}

	/** Times out every operation whose deadline has passed, then waits for the next. */
	private void sweep() {
		this.sweep = null;
		long now = System.nanoTime();
		StreamOperation first = this.byDeadline.peekFirst();
		while (first != null) {
			if (!first.done) {
				long left = first.startNanos + this.timeoutNanos - now;
				if (left > 0) {
					armSweep(left);
					return;
				}
				this.byDeadline.pollFirst();
				this.byId.remove(first.id);
				first.done = true;
				this.expired.accept(first);
			}
			else {
				this.byDeadline.pollFirst();
			}
			first = this.byDeadline.peekFirst();
		}
	}

}
