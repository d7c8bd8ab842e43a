package io.quorumkv.service.cluster;

import java.nio.file.Path;

import org.jspecify.annotations.Nullable;

/**
 * The ring in the node's data folder: {@code <data folder>/ring}, an {@link AtomicFiles}
 * file of magic {@code qkv-ring}, version 1, whose body is {@link RingJson#write}.
 * Invariant: it holds the newest ring this node has agreed to; it is written before the
 * ring is used, so a node never serves under a ring it could lose in a crash.
 */
final class RingFile {

	static final String NAME = "ring";

	private static final String MAGIC = "qkv-ring";

	private final Path file;

	RingFile(Path folder) {
		this.file = folder.resolve(NAME);
	}

	/** The stored ring; null before the node first had one. */
	@Nullable Ring read() {
		String body = AtomicFiles.read(this.file, MAGIC, 1);
		if (body == null) {
			return null;
		}
		try {
			return RingJson.read(body);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("corrupt file " + this.file.toAbsolutePath() + ": " + ex.getMessage(), ex);
		}
	}

	void write(Ring ring) {
		AtomicFiles.write(this.file, MAGIC, 1, RingJson.write(ring));
	}

	Path path() {
		return this.file.toAbsolutePath();
	}

}
