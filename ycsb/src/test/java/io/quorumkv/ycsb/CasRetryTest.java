package io.quorumkv.ycsb;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;

import io.quorumkv.client.UpdatePolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The anchors' compare-and-set loop ({@link CasRetry}) against a stub round that loses a
 * given number of times: the rounds it runs, the waits between them, what it counts, and
 * that its policy is the QuorumKV client's.
 */
class CasRetryTest {

	private final List<Duration> waits = new ArrayList<>();

	private final CasCounts counts = new CasCounts();

	/** The largest wait each time: nextLong(bound) is bound - 1. */
	private final CasRetry retry = new CasRetry(CasRetry.MAX_ROUNDS, CasRetry.BACKOFF, CasRetry.MAX_BACKOFF,
			this.waits::add, new Largest(), this.counts);

	@Test
	void aRoundThatAppliesEndsTheUpdateWithoutAWait() throws Exception {
		LosingRound round = new LosingRound(0);
		assertThat(this.retry.run(round)).isEqualTo(1);
		assertThat(round.calls.get()).isEqualTo(1);
		assertThat(this.waits).isEmpty();
		assertThat(this.counts.line("s"))
			.isEqualTo("conditional-updates: store=s updates=1 applied=1 conflicts=0 failed=0 rounds=1 retries=0");
	}

	@Test
	void lostRoundsStartAgainAfterGrowingWaitsUntilOneApplies() throws Exception {
		LosingRound round = new LosingRound(3);
		assertThat(this.retry.run(round)).isEqualTo(4);
		assertThat(round.calls.get()).isEqualTo(4);
		// before rounds 2, 3 and 4: up to 5 ms, 10 ms, 20 ms (the largest drawn here)
		assertThat(this.waits).containsExactly(Duration.ofNanos(5_000_000), Duration.ofNanos(10_000_000),
				Duration.ofNanos(20_000_000));
		assertThat(this.counts.retries()).isEqualTo(3);
		assertThat(this.counts.line("s")).contains("applied=1 conflicts=0", "rounds=4 retries=3");
	}

	@Test
	void tenLostRoundsFailTheUpdateAsAConflict() {
		LosingRound round = new LosingRound(Integer.MAX_VALUE);
		assertThatExceptionOfType(CasRetry.Conflict.class).isThrownBy(() -> this.retry.run(round))
			.withMessageContaining("10 conditional writes");
		assertThat(round.calls.get()).isEqualTo(10);
		assertThat(this.waits).hasSize(9);
		// 5 ms * 2^7 = 640 ms is past the bound: the waits before rounds 9 and 10 are 500
		// ms
		assertThat(this.waits.subList(6, 9)).containsExactly(Duration.ofMillis(320), Duration.ofMillis(500),
				Duration.ofMillis(500));
		assertThat(this.counts.line("s")).contains("updates=1 applied=0 conflicts=1 failed=0 rounds=10 retries=9");
	}

	@Test
	void aRoundThatFailsIsNotRunAgain() {
		AtomicInteger calls = new AtomicInteger();
		CasRetry.Round failsSecond = () -> {
			if (calls.incrementAndGet() == 2) {
				throw new IllegalStateException("timed out");
			}
			return false;
		};
		assertThatIllegalStateException().isThrownBy(() -> this.retry.run(failsSecond)).withMessage("timed out");
		assertThat(calls.get()).isEqualTo(2);
		assertThat(this.counts.line("s")).contains("updates=1 applied=0 conflicts=0 failed=1 rounds=2 retries=1");
	}

	@Test
	void theWaitsAreDrawnBetweenZeroAndTheBound() {
		CasRetry smallest = new CasRetry(CasRetry.MAX_ROUNDS, CasRetry.BACKOFF, CasRetry.MAX_BACKOFF, this.waits::add,
				new Smallest(), this.counts);
		for (int round = 2; round <= CasRetry.MAX_ROUNDS; round++) {
			assertThat(smallest.delay(round)).isZero();
		}
	}

	@Test
	void thePolicyIsTheQuorumKvClients() {
		assertThat(CasRetry.MAX_ROUNDS).isEqualTo(UpdatePolicy.DEFAULT.maxAttempts());
		assertThat(CasRetry.BACKOFF).isEqualTo(UpdatePolicy.DEFAULT.backoff());
		assertThat(CasRetry.MAX_BACKOFF).isEqualTo(UpdatePolicy.DEFAULT.maxBackoff());
	}

	/** A round that loses {@code losses} times, then applies. */
	private static final class LosingRound implements CasRetry.Round {

		private final int losses;

		private final AtomicInteger calls = new AtomicInteger();

		LosingRound(int losses) {
			this.losses = losses;
		}

		@Override
		public boolean applied() {
			return this.calls.incrementAndGet() > this.losses;
		}

	}

	private static final class Largest implements RandomGenerator {

		@Override
		public long nextLong() {
			throw new UnsupportedOperationException("only bounded draws");
		}

		@Override
		public long nextLong(long bound) {
			return bound - 1;
		}

	}

	private static final class Smallest implements RandomGenerator {

		@Override
		public long nextLong() {
			throw new UnsupportedOperationException("only bounded draws");
		}

		@Override
		public long nextLong(long bound) {
			return 0;
		}

	}

}
