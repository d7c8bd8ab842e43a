package io.quorumkv.service.cluster;

import java.nio.file.Path;

import org.jspecify.annotations.Nullable;

/**
 * Checksummed files replaced whole and atomically ({@link AtomicFiles}) for the other
 * packages that keep small state in the data folder (the agreement's log, the progress of
 * transfers).
 */
public final class DataFiles {

	private DataFiles() {
	}

	/** Replaces {@code target} with {@code body}, durably and atomically. */
	public static void write(Path target, String magic, int version, String body) {
		AtomicFiles.write(target, magic, version, body);
	}

	/**
	 * The body of {@code target}, or null when there is no such file.
	 * @throws IllegalStateException when the file is corrupt
	 */
	public static @Nullable String read(Path target, String magic, int version) {
		return AtomicFiles.read(target, magic, version);
	}

}
