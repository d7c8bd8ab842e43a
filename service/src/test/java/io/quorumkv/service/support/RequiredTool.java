package io.quorumkv.service.support;

import org.junit.jupiter.api.Assumptions;

/**
 * What a test does when a tool it needs (libfaketime, nft, network namespaces, a tmpfs
 * mount) is missing: on a developer's machine it is skipped with the reason, under CI
 * ({@code CI=true}, which {@code .ci/run} exports and which installs the tools) it fails,
 * so that a missing install step cannot pass as a green run that tested nothing.
 *
 * <pre>{@code
 * RequiredTool.require(Files.isRegularFile(FAKETIME), "libfaketime (apt-get install libfaketime)");
 * }</pre>
 */
public final class RequiredTool {

	private RequiredTool() {
	}

	/** Whether this run is CI's ({@code CI=true} in the environment). */
	public static boolean underCi() {
		return "true".equalsIgnoreCase(System.getenv("CI"));
	}

	/**
	 * Returns when {@code present}; else fails under CI and skips the test elsewhere,
	 * with {@code what} (the tool and how to install it) in the message.
	 */
	public static void require(boolean present, String what) {
		if (present) {
			return;
		}
		if (underCi()) {
			throw new AssertionError("missing under CI (CI=true), where .ci/run installs it: " + what);
		}
		Assumptions.abort("skipped: missing " + what + " (under CI=true this fails)");
	}

	/**
	 * For a fallback that runs a weaker test instead of skipping (one-way cuts that cut
	 * both ways, no clock faults): fails under CI when {@code present} is false, else
	 * returns whether the tool is there.
	 */
	public static boolean orFallBack(boolean present, String what) {
		if (!present && underCi()) {
			throw new AssertionError("missing under CI (CI=true), where .ci/run installs it: " + what
					+ "; the fallback would test less");
		}
		return present;
	}

}
