package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Temporary folders for tests that cannot use {@code @TempDir} (jqwik properties). */
final class TestDirs {

	private TestDirs() {
	}

	static Path create(String prefix) {
		try {
			return Files.createTempDirectory(prefix);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static void delete(Path dir) {
		try (Stream<Path> files = Files.walk(dir)) {
			for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(p);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static long size(Path dir) {
		try (Stream<Path> files = Files.list(dir)) {
			return files.mapToLong((p) -> p.toFile().length()).sum();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
