package io.quorumkv.storage;

import java.nio.file.Path;

/**
 * Persisted data failed its checksum or a bounds check: real damage, never silently
 * answered with wrong data.
 */
public class CorruptedStorageException extends StorageException {

	private final Path file;

	private final long offset;

	public CorruptedStorageException(Path file, long offset, String structure, String detail) {
		super(structure + " corrupted in " + file + " at offset " + offset + ": " + detail);
		this.file = file;
		this.offset = offset;
	}

	public Path file() {
		return this.file;
	}

	public long offset() {
		return this.offset;
	}

}
