package io.quorumkv.storage.contract;

import java.util.Random;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Seeded randomness for storage tests, the seed printed on failure: a test method that
 * declares a {@link Random} (or a {@link Seed}) parameter gets one seeded from
 * {@code -Dquorumkv.test.seed=N} when given, else from a fresh seed; when the test fails
 * the seed is attached to its failure (as a suppressed exception) and printed, so the run
 * can be repeated exactly.
 *
 * <pre>{@code
 * &#64;ExtendWith(Seeds.class)
 * class SsTableTest {
 *     &#64;RepeatedTest(5)
 *     void randomTables(Random random) { ... }
 * }
 * }</pre>
 */
public final class Seeds implements ParameterResolver, TestExecutionExceptionHandler {

	/** The system property that fixes the seed of every seeded test. */
	public static final String PROPERTY = "quorumkv.test.seed";

	/** A test's seed, for tests that seed several generators from it. */
	public record Seed(long value) {
	}

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(Seeds.class);

	/** The seed to use: the property when set, else a fresh one. */
	public static long next() {
		String fixed = System.getProperty(PROPERTY);
		return (fixed != null && !fixed.isBlank()) ? Long.parseLong(fixed.trim())
				: new Random().nextLong() ^ System.nanoTime();
	}

	/** How to rerun with {@code seed}. */
	public static String rerun(long seed) {
		return "seed " + seed + " (rerun with -D" + PROPERTY + "=" + seed + ")";
	}

	@Override
	public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
		Class<?> type = parameter.getParameter().getType();
		return type == Random.class || type == Seed.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
		long seed = context.getStore(NAMESPACE).getOrComputeIfAbsent("seed", (k) -> next(), Long.class);
		return (parameter.getParameter().getType() == Random.class) ? new Random(seed) : new Seed(seed);
	}

	@Override
	public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
		Long seed = context.getStore(NAMESPACE).get("seed", Long.class);
		if (seed != null) {
			String note = context.getDisplayName() + " failed with " + rerun(seed);
			System.err.println("[seed] " + note);
			failure.addSuppressed(new SeedNote(note));
		}
		throw failure;
	}

	/** Carries the seed in a failure's report. */
	static final class SeedNote extends RuntimeException {

		SeedNote(String message) {
			super(message, null, false, false);
		}

	}

}
