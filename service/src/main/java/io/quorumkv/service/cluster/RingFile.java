package io.quorumkv.service.cluster;

import java.nio.file.Path;

import io.quorumkv.service.storage.ChecksummedFile;
import org.jspecify.annotations.Nullable;

/**
 * The ring in the node's data folder: {@code <data folder>/ring}, a
 * {@link ChecksummedFile} of magic {@code QKVG}, version 1 (read too in the text envelope
 * {@code qkv-ring} of the nodes before), whose body is {@link RingJson#write}. Invariant:
 * it holds the newest ring this node has agreed to; it is written before the ring is
 * used, so a node never serves under a ring it could lose in a crash.
 */
final class RingFile {

	static final String NAME = "ring";

	/** {@code QKVG}. */
	static final int MAGIC = 0x514b5647;

	private final Path file;

	private final ChecksummedFile envelope;

	RingFile(Path folder) {
		this.file = folder.resolve(NAME);
		this.envelope = ChecksummedFile.text(this.file, MAGIC, "qkv-ring");
	}

	/** The stored ring; null before the node first had one. */
	@Nullable Ring read() {
		String body = this.envelope.readText();
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
		this.envelope.writeText(RingJson.write(ring));
	}

	Path path() {
		return this.file.toAbsolutePath();
	}

}
