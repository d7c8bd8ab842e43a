package io.quorumkv.ycsb;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * The loop of a conditional update (compare-and-set) in the anchors' bindings,
 * Cassandra's lightweight transactions and etcd's transactions: a round reads the record,
 * merges YCSB's fields into it and writes the result on the condition that the record is
 * still the one read; a round that lost (another writer came between) starts again after
 * a jittered wait, and after {@value #MAX_ROUNDS} lost rounds the update fails with
 * {@link Conflict}. A round that fails otherwise (a timeout, an unreachable store) fails
 * the update at once: a conditional write that may have been applied is not sent again.
 *
 * <p>
 * The policy is the QuorumKV client's ({@code UpdatePolicy.DEFAULT}, which its
 * {@code update} and so {@code quorumkv.conditional-update} use): before round
 * {@code n > 1} a random wait up to {@code 5 ms * 2^(n-2)}, at most 500 ms. It is copied,
 * not shared, because that class lives in module {@code client}, on Netty 4.2, which the
 * anchors' classpath (Netty 4.1) leaves out; {@code CasRetryTest} holds the two equal.
 */
public final class CasRetry {

	public static final int MAX_ROUNDS = 10;

	public static final Duration BACKOFF = Duration.ofMillis(5);

	public static final Duration MAX_BACKOFF = Duration.ofMillis(500);

	private final int maxRounds;

	private final Duration backoff;

	private final Duration maxBackoff;

	private final Pause pause;

	private final RandomGenerator random;

	private final CasCounts counts;

	CasRetry(int maxRounds, Duration backoff, Duration maxBackoff, Pause pause, RandomGenerator random,
			CasCounts counts) {
		if (maxRounds < 1) {
			throw new IllegalArgumentException("at least one round, not " + maxRounds);
		}
		if (backoff.isNegative() || maxBackoff.compareTo(backoff) < 0) {
			throw new IllegalArgumentException("need 0 <= backoff <= maxBackoff, not " + backoff + ", " + maxBackoff);
		}
		this.maxRounds = maxRounds;
		this.backoff = backoff;
		this.maxBackoff = maxBackoff;
		this.pause = Objects.requireNonNull(pause, "pause");
		this.random = Objects.requireNonNull(random, "random");
		this.counts = Objects.requireNonNull(counts, "counts");
	}

	/**
	 * The client's policy: {@value #MAX_ROUNDS} rounds, jittered waits that sleep the
	 * calling thread (a YCSB client thread, which waits for its operation anyway).
	 */
	public static CasRetry standard(CasCounts counts) {
		return new CasRetry(MAX_ROUNDS, BACKOFF, MAX_BACKOFF, Thread::sleep, ThreadLocalRandom.current(), counts);
	}

	/**
	 * Runs rounds until one applies and returns how many ran.
	 * @throws Conflict when every round lost
	 * @throws Exception what a round threw, at once
	 */
	public int run(Round round) throws Exception {
		for (int n = 1;; n++) {
			boolean applied;
			try {
				applied = round.applied();
			}
			catch (Exception ex) {
				this.counts.failed(n);
				throw ex;
			}
			if (applied) {
				this.counts.applied(n);
				return n;
			}
			if (n >= this.maxRounds) {
				this.counts.conflict(n);
				throw new Conflict(n);
			}
			this.pause.pause(delay(n + 1));
		}
	}

	/** The wait before round {@code round} (2 or more): the client's formula. */
	Duration delay(int round) {
		long bound = Math.min(this.maxBackoff.toNanos(), this.backoff.toNanos() << Math.min(30, round - 2));
		return Duration.ofNanos((bound > 0) ? this.random.nextLong(bound + 1) : 0);
	}

	/** One round: read, merge, write on a condition; true when the write was applied. */
	@FunctionalInterface
	public interface Round {

		boolean applied() throws Exception;

	}

	/** How the loop waits between rounds. */
	@FunctionalInterface
	interface Pause {

		void pause(Duration wait) throws InterruptedException;

	}

	/** Every round of an update lost to another writer. */
	public static final class Conflict extends Exception {

		private static final long serialVersionUID = 1L;

		Conflict(int rounds) {
			super("another writer changed the record before each of " + rounds + " conditional writes");
		}

	}

}
