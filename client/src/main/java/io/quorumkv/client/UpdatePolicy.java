package io.quorumkv.client;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * How {@link QuorumKvClient#update} retries when another writer changed the key between
 * its read and its conditional write (a 412): at most {@code maxAttempts} rounds of read,
 * apply, write; before round {@code n > 1} a random wait up to {@code backoff * 2^(n-2)},
 * at most {@code maxBackoff} (jitter spreads writers contending for one key apart). When
 * every round lost, the update fails with {@link UpdateConflictException}.
 *
 * @param maxAttempts rounds, the first included (1 to 1,000)
 * @param backoff the bound of the wait before the second round
 * @param maxBackoff the largest wait (at most a minute)
 */
public record UpdatePolicy(int maxAttempts, Duration backoff, Duration maxBackoff) {

	/** Ten rounds, waits from 5 ms up to 500 ms. */
	public static final UpdatePolicy DEFAULT = new UpdatePolicy(10, Duration.ofMillis(5), Duration.ofMillis(500));

	public UpdatePolicy {
		Objects.requireNonNull(backoff, "backoff");
		Objects.requireNonNull(maxBackoff, "maxBackoff");
		if (maxAttempts < 1 || maxAttempts > 1_000) {
			throw new IllegalArgumentException("maxAttempts must be 1..1000, not " + maxAttempts);
		}
		if (backoff.isNegative() || maxBackoff.compareTo(backoff) < 0
				|| maxBackoff.compareTo(Duration.ofMinutes(1)) > 0) {
			throw new IllegalArgumentException(
					"need 0 <= backoff <= maxBackoff <= 1 min, not " + backoff + " and " + maxBackoff);
		}
	}

	/** The wait before round {@code round} (2 or more), drawn from {@code random}. */
	Duration delay(int round, RandomGenerator random) {
		long bound = Math.min(this.maxBackoff.toNanos(), this.backoff.toNanos() << Math.min(30, round - 2));
		return Duration.ofNanos((bound > 0) ? random.nextLong(bound + 1) : 0);
	}

}
