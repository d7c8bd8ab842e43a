package io.quorumkv.service.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Whole folders copied for tests (a snapshot set shipped elsewhere, say). */
public final class FileTrees {

	private FileTrees() {
	}

	/** Copies the tree under {@code from} to {@code to}, folders and files. */
	public static void copy(Path from, Path to) {
		try (Stream<Path> files = Files.walk(from)) {
			for (Path file : files.toList()) {
				Path target = to.resolve(from.relativize(file).toString());
				if (Files.isDirectory(file)) {
					Files.createDirectories(target);
				}
				else {
					Files.copy(file, target);
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
