package io.quorumkv.service.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Folders of fault tests under {@code java.io.tmpdir} (the build's {@code target/tmp}):
 * kept when a test failed, so that the nodes' logs can be read, deleted otherwise.
 */
public final class FaultFolders {

	private static volatile boolean failed;

	private FaultFolders() {
	}

	public static Path create(String name) {
		try {
			return Files.createTempDirectory("faults-" + name + "-");
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** Marks the run failed: folders are kept. */
	public static void keep() {
		failed = true;
	}

	public static void deleteUnlessFailed(Path folder) {
		if (failed) {
			System.out.println("Fault test folder kept for inspection: " + folder);
			return;
		}
		delete(folder);
	}

	/** Keeps the folders of a test class once one of its tests failed. */
	public static final class KeepOnFailure implements org.junit.jupiter.api.extension.TestWatcher {

		@Override
		public void testFailed(org.junit.jupiter.api.extension.ExtensionContext context,
				@org.jspecify.annotations.Nullable Throwable cause) {
			keep();
		}

	}

	public static void delete(Path folder) {
		if (!Files.exists(folder)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(folder)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// best effort
		}
	}

}
