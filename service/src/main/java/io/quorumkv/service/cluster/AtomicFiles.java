package io.quorumkv.service.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HexFormat;
import java.util.zip.CRC32C;

import org.jspecify.annotations.Nullable;

/**
 * Small files replaced whole and atomically, with a checksum: the node id, the ring, a
 * prepared ring change, the progress of transfers.
 *
 * <p>
 * Layout: one header line {@code <magic> <version> <crc32c of the body, 8 hex digits>
 * <body length>}, a line feed, then the body (UTF-8 text). Invariants: the file is either
 * the old or the new content, never a mix (written to a temporary file in the same
 * folder, forced to disk, renamed over the target, and the folder forced); a body whose
 * length or checksum does not match the header is reported as corrupt with the file's
 * name, never used.
 */
public final class AtomicFiles {

	private AtomicFiles() {
	}

	/** Replaces {@code target} with a checksummed body, durably. */
	static void write(Path target, String magic, int version, String body) {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		CRC32C crc = new CRC32C();
		crc.update(bytes);
		byte[] header = (magic + " " + version + " " + HexFormat.of().toHexDigits((int) crc.getValue()) + " "
				+ bytes.length + "\n")
			.getBytes(StandardCharsets.US_ASCII);
		byte[] content = new byte[header.length + bytes.length];
		System.arraycopy(header, 0, content, 0, header.length);
		System.arraycopy(bytes, 0, content, header.length, bytes.length);
		try {
			replace(target, content);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot write " + target, ex);
		}
	}

	/**
	 * Replaces {@code target} with {@code content}, durably and whole: written to a
	 * temporary file in the same folder, forced to disk, renamed over the target, and the
	 * folder forced. A failed write leaves the old file as it was.
	 * @throws IOException when any step fails (the temporary file is removed)
	 */
	public static void replace(Path target, byte[] content) throws IOException {
		Path folder = target.toAbsolutePath().getParent();
		Path temporary = folder.resolve(target.getFileName() + ".tmp");
		try {
			Files.createDirectories(folder);
			try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE,
					StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
				ByteBuffer buffer = ByteBuffer.wrap(content);
				while (buffer.hasRemaining()) {
					channel.write(buffer);
				}
				channel.force(true);
			}
			Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
			try (FileChannel directory = FileChannel.open(folder, StandardOpenOption.READ)) {
				directory.force(true);
			}
		}
		finally {
			Files.deleteIfExists(temporary);
		}
	}

	/**
	 * The body of {@code target}, or null when there is no such file.
	 * @throws IllegalStateException when the file is not of this magic and version, or
	 * its body does not match the header's length and checksum
	 */
	static @Nullable String read(Path target, String magic, int version) {
		byte[] bytes;
		try {
			if (!Files.exists(target)) {
				return null;
			}
			bytes = Files.readAllBytes(target);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot read " + target, ex);
		}
		int newline = -1;
		for (int i = 0; i < Math.min(bytes.length, 256); i++) {
			if (bytes[i] == '\n') {
				newline = i;
				break;
			}
		}
		if (newline < 0) {
			throw corrupt(target, "no header line");
		}
		String[] header = new String(bytes, 0, newline, StandardCharsets.US_ASCII).split(" ");
		if (header.length != 4 || !header[0].equals(magic)) {
			throw corrupt(target, "not a " + magic + " file");
		}
		if (!header[1].equals(Integer.toString(version))) {
			throw corrupt(target, "format version " + header[1] + ", this node reads " + version);
		}
		int length;
		int expected;
		try {
			expected = HexFormat.fromHexDigits(header[2]);
			length = Integer.parseInt(header[3]);
		}
		catch (IllegalArgumentException ex) {
			throw corrupt(target, "malformed header");
		}
		if (header[2].length() != 8 || length < 0 || length != bytes.length - newline - 1) {
			throw corrupt(target, "body of " + (bytes.length - newline - 1) + " bytes, header says " + length);
		}
		CRC32C crc = new CRC32C();
		crc.update(bytes, newline + 1, length);
		if ((int) crc.getValue() != expected) {
			throw corrupt(target, "checksum mismatch at byte offset " + (newline + 1));
		}
		return new String(bytes, newline + 1, length, StandardCharsets.UTF_8);
	}

	private static IllegalStateException corrupt(Path target, String why) {
		return new IllegalStateException("corrupt file " + target.toAbsolutePath() + ": " + why
				+ "; restore it from a backup or remove the node and replace it");
	}

}
