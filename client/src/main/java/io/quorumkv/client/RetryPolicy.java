package io.quorumkv.client;

import java.time.Duration;
import java.util.Objects;

/**
 * When the client tries a request again, on the next node of its {@link Router}'s plan.
 *
 * <p>
 * <b>What is retried.</b> A failure to connect is always retried (nothing was sent). A
 * read ({@code get}, and a scan that has not delivered its first record yet) is also
 * retried after a 503, a 504, a response timeout or a lost connection: reading twice
 * changes nothing. A write ({@code put}, {@code delete}) whose request may have reached a
 * node is retried only when {@link #retryWrites()} is on, because a retried write is not
 * the same write again: the coordinator stamps every write with a new timestamp, so under
 * last-write-wins the retry can overwrite a newer write of another client that landed
 * between the two attempts (a {@code put} of a fixed value is idempotent only while no
 * one else writes the key; a {@code delete} retried can delete a newer value). Turn it on
 * when each key has one writer, or when a lost concurrent update is acceptable. A
 * conditional write ({@code putIf}, {@code putIfAbsent}, {@code deleteIf}) that may have
 * reached a node is never retried, whatever this setting: a repeat of one that was
 * applied would answer 412 and hide its success (see {@link UpdatePolicy} for what
 * {@code update} repeats instead).
 *
 * <p>
 * <b>Budget.</b> Retries draw on one budget per client, a token bucket of
 * {@code budgetBurst} tokens: each request adds {@code budgetRatio} of a token, each
 * retry takes one. When a node or the network fails, retries therefore add at most
 * {@code budgetRatio} to the load (plus the burst) instead of multiplying it by
 * {@code maxAttempts}. A retry refused by the budget ends the request with its failure,
 * marked {@link QuorumKvException#retryBudgetExhausted()}.
 *
 * <p>
 * <b>Delay.</b> Before attempt {@code n > 1} the client waits a random time up to
 * {@code backoff * 2^(n-2)}, at most {@code maxBackoff}; after a 503 whose next attempt
 * goes to the same node, at least the node's {@code Retry-After}, also capped by
 * {@code maxBackoff}.
 *
 * @param maxAttempts attempts per request, the first included (1 turns retries off)
 * @param backoff the first retry's delay bound
 * @param maxBackoff the largest delay before a retry
 * @param budgetRatio tokens each request adds to the budget (0.2: retries add at most
 * 20%)
 * @param budgetBurst the budget's capacity, and its content at start
 * @param retryWrites whether writes are retried when they may have reached a node
 */
public record RetryPolicy(int maxAttempts, Duration backoff, Duration maxBackoff, double budgetRatio, int budgetBurst,
		boolean retryWrites) {

	/**
	 * Three attempts, 10 ms to 200 ms back-off, a budget of 20% with a burst of 20,
	 * writes not retried.
	 */
	public static final RetryPolicy DEFAULT = new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(200), 0.2, 20,
			false);

	/** One attempt: nothing is retried. */
	public static final RetryPolicy NONE = DEFAULT.withMaxAttempts(1);

	public RetryPolicy {
		Objects.requireNonNull(backoff, "backoff");
		Objects.requireNonNull(maxBackoff, "maxBackoff");
		if (maxAttempts < 1 || maxAttempts > 10) {
			throw new IllegalArgumentException("maxAttempts must be 1..10, not " + maxAttempts);
		}
		if (backoff.isNegative() || maxBackoff.compareTo(backoff) < 0
				|| maxBackoff.compareTo(Duration.ofMinutes(1)) > 0) {
			throw new IllegalArgumentException(
					"need 0 <= backoff <= maxBackoff <= 1 min, not " + backoff + " and " + maxBackoff);
		}
		if (!(budgetRatio >= 0 && budgetRatio <= 1)) {
			throw new IllegalArgumentException("budgetRatio must be within 0..1, not " + budgetRatio);
		}
		if (budgetBurst < 0 || budgetBurst > 1_000_000) {
			throw new IllegalArgumentException("budgetBurst must be 0..1000000, not " + budgetBurst);
		}
	}

	public RetryPolicy withMaxAttempts(int maxAttempts) {
		return new RetryPolicy(maxAttempts, this.backoff, this.maxBackoff, this.budgetRatio, this.budgetBurst,
				this.retryWrites);
	}

	public RetryPolicy withBackoff(Duration backoff, Duration maxBackoff) {
		return new RetryPolicy(this.maxAttempts, backoff, maxBackoff, this.budgetRatio, this.budgetBurst,
				this.retryWrites);
	}

	public RetryPolicy withBudget(double budgetRatio, int budgetBurst) {
		return new RetryPolicy(this.maxAttempts, this.backoff, this.maxBackoff, budgetRatio, budgetBurst,
				this.retryWrites);
	}

	/**
	 * A copy that also retries writes which may have reached a node (see the class
	 * comment).
	 */
	public RetryPolicy withRetryWrites(boolean retryWrites) {
		return new RetryPolicy(this.maxAttempts, this.backoff, this.maxBackoff, this.budgetRatio, this.budgetBurst,
				retryWrites);
	}

}
