package io.quorumkv.service.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.zip.CRC32C;

import io.quorumkv.storage.CorruptedStorageException;
import org.jspecify.annotations.Nullable;

/**
 * A small file the node rewrites whole and atomically: the clock's high-water mark, the
 * repair history. One envelope for all of them:
 *
 * <pre>
 * file := u32 magic | u32 version | u32 payloadLength | payload | u32 crc32c
 * </pre>
 *
 * big-endian, the checksum over everything before it. A write goes to {@code <name>.tmp},
 * is forced, renamed over the file and the folder forced: a crash leaves the old or the
 * new content, never a mix. Invariants checked on every read: the magic and version are
 * the caller's, the length fits the file exactly, the checksum matches; anything else is
 * reported as corruption with the file and the structure, never read as data.
 *
 * @param path the file
 * @param magic the structure's tag, first four bytes
 * @param version the payload's format version
 */
public record ChecksummedFile(Path path, int magic, int version) {

	private static final int HEADER = 12;

	private static final int TRAILER = 4;

	/** A payload larger than this is refused on write and reported as damage on read. */
	static final int MAX_PAYLOAD = 16 * 1024 * 1024;

	public ChecksummedFile {
		Objects.requireNonNull(path, "path");
	}

	/** The payload, or null when the file does not exist. */
	public byte @Nullable [] read() throws IOException {
		if (!Files.exists(this.path)) {
			return null;
		}
		byte[] bytes = Files.readAllBytes(this.path);
		if (bytes.length < HEADER + TRAILER) {
			throw damaged("file of " + bytes.length + " bytes is shorter than its envelope", 0);
		}
		ByteBuffer in = ByteBuffer.wrap(bytes);
		int magic = in.getInt();
		int version = in.getInt();
		int length = in.getInt();
		if (magic != this.magic) {
			throw damaged("magic " + Integer.toHexString(magic) + " is not " + Integer.toHexString(this.magic), 0);
		}
		if (version != this.version) {
			throw damaged("unknown format version " + version, 4);
		}
		if (length < 0 || length > MAX_PAYLOAD || length != bytes.length - HEADER - TRAILER) {
			throw damaged("payload length " + length + " does not fit a file of " + bytes.length + " bytes", 8);
		}
		CRC32C crc = new CRC32C();
		crc.update(bytes, 0, HEADER + length);
		int stored = ByteBuffer.wrap(bytes, HEADER + length, TRAILER).getInt();
		if (stored != (int) crc.getValue()) {
			throw damaged("checksum mismatch", HEADER + length);
		}
		byte[] payload = new byte[length];
		System.arraycopy(bytes, HEADER, payload, 0, length);
		return payload;
	}

	/** Replaces the file's content with {@code payload}, atomically and durably. */
	public void write(byte[] payload) throws IOException {
		if (payload.length > MAX_PAYLOAD) {
			throw new IllegalArgumentException("payload of " + payload.length + " bytes exceeds " + MAX_PAYLOAD);
		}
		ByteBuffer out = ByteBuffer.allocate(HEADER + payload.length + TRAILER);
		out.putInt(this.magic).putInt(this.version).putInt(payload.length).put(payload);
		CRC32C crc = new CRC32C();
		crc.update(out.array(), 0, out.position());
		out.putInt((int) crc.getValue());
		out.flip();
		Path folder = this.path.toAbsolutePath().getParent();
		Files.createDirectories(folder);
		Path tmp = this.path.resolveSibling(this.path.getFileName() + ".tmp");
		try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
				StandardOpenOption.TRUNCATE_EXISTING)) {
			while (out.hasRemaining()) {
				channel.write(out);
			}
			channel.force(true);
		}
		try {
			Files.move(tmp, this.path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
		}
		catch (AtomicMoveNotSupportedException ex) {
			throw new IOException("cannot replace " + this.path + " atomically", ex);
		}
		try (FileChannel dir = FileChannel.open(folder, StandardOpenOption.READ)) {
			dir.force(true);
		}
	}

	private CorruptedStorageException damaged(String what, long offset) {
		return new CorruptedStorageException(this.path, offset, "file " + Integer.toHexString(this.magic), what);
	}

}
