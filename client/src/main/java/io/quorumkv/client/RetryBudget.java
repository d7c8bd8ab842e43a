package io.quorumkv.client;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The client's retry budget ({@link RetryPolicy}): a token bucket kept in thousandths of
 * a token, lock-free. Every request deposits {@code ratio}, every retry withdraws one
 * whole token, and the bucket never holds more than {@code burst}.
 */
final class RetryBudget {

	private static final long ONE = 1000;

	private final long deposit;

	private final long capacity;

	private final AtomicLong milliTokens;

	RetryBudget(double ratio, int burst) {
		this.deposit = Math.round(ratio * ONE);
		this.capacity = burst * ONE;
		this.milliTokens = new AtomicLong(this.capacity);
	}

	/** A request starts: it earns its share of a retry. */
	void deposit() {
		if (this.deposit == 0) {
			return;
		}
		long current;
		do {
			current = this.milliTokens.get();
			if (current >= this.capacity) {
				return;
			}
		}
		while (!this.milliTokens.compareAndSet(current, Math.min(this.capacity, current + this.deposit)));
	}

	/** Takes a token for one retry; false, taking nothing, when less than one is left. */
	boolean tryWithdraw() {
		long current;
		do {
			current = this.milliTokens.get();
			if (current < ONE) {
				return false;
			}
		}
		while (!this.milliTokens.compareAndSet(current, current - ONE));
		return true;
	}

}
