package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * {@link LinearizabilityChecker} on histories of registers that apply each operation
 * atomically (so each is linearizable), then with one read's answer replaced by a value
 * no linearization lets it see (so each must be caught). Seeds are printed in every
 * failure; {@code -Dquorumkv.linearizability.seed=N} replays one (the first test's base).
 */
class LinearizabilityRandomTest {

	private static final LinearizabilityChecker CHECKER = new LinearizabilityChecker(
			LinearizabilityChecker.Budget.DEFAULT);

	private static long seed() {
		return Long.getLong("quorumkv.linearizability.seed", new Random().nextLong());
	}

	@Test
	void atomicHistoriesAreLinearizableAndAFlippedReadInThemIsCaught() {
		long base = seed();
		int mutated = 0;
		for (int i = 0; i < 300; i++) {
			long seed = base + i;
			Random random = new Random(seed);
			List<LinearizabilityOp> history = LinearizabilityHistories.generate(seed, 20 + random.nextInt(200),
					1 + random.nextInt(6), 1 + random.nextInt(3), (i % 3 == 0) ? 0.05 : 0.0);
			LinearizabilityResult result = CHECKER.check(history);
			assertThat(result).as("seed %d: %s", seed, result).isInstanceOf(LinearizabilityResult.Linearizable.class);
			Optional<List<LinearizabilityOp>> flipped = LinearizabilityHistories.staleRead(history, random);
			if (flipped.isPresent()) {
				mutated++;
				LinearizabilityResult caught = CHECKER.check(flipped.get());
				assertThat(caught).as("seed %d with a flipped read", seed)
					.isInstanceOf(LinearizabilityResult.Violation.class);
			}
		}
		// most histories have a read to flip: the second half of the test really ran
		assertThat(mutated).as("histories mutated from seed %d", base).isGreaterThan(150);
	}

	@Test
	void tenThousandOperationsAreCheckedWithinBounds() {
		long seed = seed();
		List<LinearizabilityOp> history = LinearizabilityHistories.generate(seed, 10_000, 8, 10, 0.002);
		// the step budget bounds the work; the time bound is generous for a shared
		// machine
		LinearizabilityResult result = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> CHECKER.check(history));
		assertThat(result).as("seed %d: %s", seed, result).isInstanceOf(LinearizabilityResult.Linearizable.class);
		assertThat(((LinearizabilityResult.Linearizable) result).operations()).isEqualTo(10_000);
		List<LinearizabilityOp> flipped = LinearizabilityHistories.staleRead(history, new Random(seed))
			.orElseThrow(() -> new AssertionError("seed " + seed + ": no read to flip in 10,000 operations"));
		LinearizabilityResult caught = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> CHECKER.check(flipped));
		assertThat(caught).as("seed %d with a flipped read", seed).isInstanceOf(LinearizabilityResult.Violation.class);
	}

}
