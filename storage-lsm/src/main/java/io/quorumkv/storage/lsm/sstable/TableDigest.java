package io.quorumkv.storage.lsm.sstable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;

/**
 * A table's whole-file checksum, written by {@link SsTableBuilder} beside the table and
 * named after it ({@code 000042.sst.crc32c}), so that a snapshot's manifest takes the
 * table's CRC32C without reading it (Cassandra's {@code Digest.crc32} component).
 *
 * <pre>
 * digest = u64 magic | u64 length | u32 crc32c(table file) | u32 crc32c(all preceding bytes)
 * </pre>
 *
 * Big-endian, {@link #ENCODED_SIZE} bytes. Invariants: the magic is {@link #MAGIC}; the
 * last checksum matches; {@code length} is the table file's size and {@code crc32c} the
 * CRC32C of all its bytes. It is written and forced before the table takes its name, and
 * deleted with the table. A digest of the wrong size, magic or checksum (a torn write, a
 * damaged file), or whose length is not the table's, is ignored: the reader sums the
 * table itself. Tables written before it have none.
 *
 * @param length the table file's size in bytes
 * @param crc32c the CRC32C of the table file's content
 */
public record TableDigest(long length, long crc32c) {

	/** The suffix appended to the table's file name. */
	public static final String SUFFIX = ".crc32c";

	/** The suffix of a table's file name: only a table has a digest. */
	public static final String TABLE_SUFFIX = ".sst";

	public static final int ENCODED_SIZE = 8 + 8 + 4 + 4;

	/** "QKVCRC01" in ASCII. */
	public static final long MAGIC = 0x514b564352433031L;

	/** The digest file of {@code table}. */
	public static Path of(Path table) {
		return table.resolveSibling(table.getFileName() + SUFFIX);
	}

	byte[] encode() {
		ByteBuffer out = ByteBuffer.allocate(ENCODED_SIZE);
		out.putLong(MAGIC).putLong(this.length).putInt((int) this.crc32c);
		CRC32C crc = new CRC32C();
		crc.update(out.array(), 0, out.position());
		out.putInt((int) crc.getValue());
		return out.array();
	}

	/** The digest {@code bytes} hold, or null when they are not a whole, intact one. */
	static @Nullable TableDigest decode(byte[] bytes, int length) {
		if (length != ENCODED_SIZE) {
			return null;
		}
		ByteBuffer in = ByteBuffer.wrap(bytes, 0, length);
		CRC32C crc = new CRC32C();
		crc.update(bytes, 0, ENCODED_SIZE - 4);
		if (in.getLong(0) != MAGIC || (int) crc.getValue() != in.getInt(ENCODED_SIZE - 4)) {
			return null;
		}
		long fileLength = in.getLong(8);
		return (fileLength >= 0) ? new TableDigest(fileLength, Integer.toUnsignedLong(in.getInt(16))) : null;
	}

	/** Writes this digest to {@code file} and forces it. */
	public void write(FileIo io, Path file) throws IOException {
		byte[] bytes = encode();
		try (AppendFile out = io.createOrTruncate(file)) {
			out.write(bytes, 0, bytes.length);
			out.sync();
		}
	}

	/**
	 * The digest beside {@code table}, or null when there is none or it is torn or
	 * damaged (the caller then reads the table), or the file is not a table (a
	 * {@code .crc32c} file beside a manifest or a WAL segment is none of ours).
	 * @throws IOException when it exists but cannot be read
	 */
	public static @Nullable TableDigest readBeside(Path table) throws IOException {
		if (!table.getFileName().toString().endsWith(TABLE_SUFFIX)) {
			return null;
		}
		byte[] bytes = new byte[ENCODED_SIZE + 1];
		int length = 0;
		try (FileChannel channel = FileChannel.open(of(table), StandardOpenOption.READ)) {
			ByteBuffer buffer = ByteBuffer.wrap(bytes);
			while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
				// Reads at most one byte beyond a digest: a longer file is no digest.
			}
			length = buffer.position();
		}
		catch (NoSuchFileException ex) {
			return null;
		}
		return decode(bytes, length);
	}

}
