package io.quorumkv.service.storage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.zip.CRC32C;

import io.quorumkv.storage.CorruptedStorageException;
import org.jspecify.annotations.Nullable;

/**
 * A small file the node rewrites whole and atomically: its id, its ring, the clock's
 * high-water mark, the repair history, the progress of transfers. One envelope for all of
 * them:
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
 * <p>
 * The node's text files (id, ring, transfers) had an envelope of their own before: a
 * header line {@code <text magic> 1 <crc32c, 8 hex digits> <body length>}, a line feed,
 * the body. A file made with a {@code textMagic} still reads that form, with the same
 * checks, and the next write replaces it with this envelope.
 *
 * @param path the file
 * @param magic the structure's tag, first four bytes
 * @param version the payload's format version
 * @param textMagic the tag of the structure's text envelope before this one, or null
 */
public record ChecksummedFile(Path path, int magic, int version, @Nullable String textMagic) {

	private static final int HEADER = 12;

	private static final int TRAILER = 4;

	/** A payload larger than this is refused on write and reported as damage on read. */
	static final int MAX_PAYLOAD = 16 * 1024 * 1024;

	public ChecksummedFile {
		Objects.requireNonNull(path, "path");
	}

	public ChecksummedFile(Path path, int magic, int version) {
		this(path, magic, version, null);
	}

	/**
	 * A file of UTF-8 text (version 1), which may still be in the text envelope of the
	 * nodes before ({@code textMagic}).
	 */
	public static ChecksummedFile text(Path path, int magic, String textMagic) {
		return new ChecksummedFile(path, magic, 1, textMagic);
	}

	/**
	 * The text, or null when the file does not exist.
	 * @throws IllegalStateException when the file is damaged (its message names the file
	 * and what to do)
	 * @throws UncheckedIOException when it cannot be read
	 */
	public @Nullable String readText() {
		try {
			byte[] payload = read();
			return (payload != null) ? new String(payload, StandardCharsets.UTF_8) : null;
		}
		catch (CorruptedStorageException ex) {
			throw new IllegalStateException("corrupt file " + this.path.toAbsolutePath() + ": " + ex.getMessage()
					+ "; restore it from a backup or remove the node and replace it", ex);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot read " + this.path, ex);
		}
	}

	/**
	 * Replaces the file's content with {@code text}, atomically and durably.
	 * @throws UncheckedIOException when it cannot be written (the old content stays)
	 */
	public void writeText(String text) {
		try {
			write(text.getBytes(StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot write " + this.path, ex);
		}
	}

	/** The payload, or null when the file does not exist. */
	public byte @Nullable [] read() throws IOException {
		if (!Files.exists(this.path)) {
			return null;
		}
		byte[] bytes = Files.readAllBytes(this.path);
		if (this.textMagic != null && startsWith(bytes, (this.textMagic + " ").getBytes(StandardCharsets.US_ASCII))) {
			return readTextEnvelope(bytes);
		}
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
		replace(this.path, out.array());
	}

	/**
	 * Replaces {@code target} with {@code content}, durably and whole: written to
	 * {@code <name>.tmp} in the same folder, forced to disk, renamed over the target, and
	 * the folder forced. A failed write leaves the old file as it was.
	 * @throws IOException when any step fails (a temporary file it wrote is removed;
	 * anything else in its place, such as a folder, is left as it is)
	 */
	public static void replace(Path target, byte[] content) throws IOException {
		Path folder = target.toAbsolutePath().getParent();
		Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
		try {
			Files.createDirectories(folder);
			try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
					StandardOpenOption.TRUNCATE_EXISTING)) {
				ByteBuffer out = ByteBuffer.wrap(content);
				while (out.hasRemaining()) {
					channel.write(out);
				}
				channel.force(true);
			}
			try {
				Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
			}
			catch (AtomicMoveNotSupportedException ex) {
				throw new IOException("cannot replace " + target + " atomically", ex);
			}
			syncFolder(folder);
		}
		catch (IOException | RuntimeException ex) {
			if (Files.isRegularFile(tmp, LinkOption.NOFOLLOW_LINKS)) {
				Files.deleteIfExists(tmp);
			}
			throw ex;
		}
	}

	/**
	 * Forces {@code folder}'s entries (a file created, renamed or deleted in it) to the
	 * disk.
	 */
	public static void syncFolder(Path folder) throws IOException {
		try (FileChannel channel = FileChannel.open(folder, StandardOpenOption.READ)) {
			channel.force(true);
		}
	}

	/** The body of the text envelope before this one, checked as it was. */
	private byte[] readTextEnvelope(byte[] bytes) {
		int newline = -1;
		for (int i = 0; i < Math.min(bytes.length, 256); i++) {
			if (bytes[i] == '\n') {
				newline = i;
				break;
			}
		}
		if (newline < 0) {
			throw damaged("no header line", 0);
		}
		String[] header = new String(bytes, 0, newline, StandardCharsets.US_ASCII).split(" ");
		if (header.length != 4 || !header[1].equals(Integer.toString(this.version))) {
			throw damaged("text header " + String.join(" ", header) + " is not version " + this.version, 0);
		}
		int length;
		int expected;
		try {
			expected = HexFormat.fromHexDigits(header[2]);
			length = Integer.parseInt(header[3]);
		}
		catch (IllegalArgumentException ex) {
			throw damaged("malformed text header", 0);
		}
		if (header[2].length() != 8 || length < 0 || length != bytes.length - newline - 1) {
			throw damaged("body of " + (bytes.length - newline - 1) + " bytes, header says " + length, newline + 1);
		}
		CRC32C crc = new CRC32C();
		crc.update(bytes, newline + 1, length);
		if ((int) crc.getValue() != expected) {
			throw damaged("checksum mismatch", newline + 1);
		}
		return Arrays.copyOfRange(bytes, newline + 1, bytes.length);
	}

	private static boolean startsWith(byte[] bytes, byte[] prefix) {
		return bytes.length >= prefix.length && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
	}

	private CorruptedStorageException damaged(String what, long offset) {
		return new CorruptedStorageException(this.path, offset, "file " + Integer.toHexString(this.magic), what);
	}

}
