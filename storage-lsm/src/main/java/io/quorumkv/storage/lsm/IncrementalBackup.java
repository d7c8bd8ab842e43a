package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.zip.CRC32C;

import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FileIo;

/**
 * The checksum record of one table in an incremental backup folder ({@code backups/} of a
 * data folder with {@link LsmOptions#incrementalBackups()} on): the table's file name,
 * size and CRC32C, when its memtable was frozen, and which table the store flushed before
 * it. It is written beside the table as {@code 000042.sst.backup}, before the table's
 * link takes its name ({@code 000042.sst.tmp} until then), by write-then-rename, so a
 * record is whole or absent, and a table under its name always has its record.
 *
 * <pre>
 * quorumkv-incremental-backup 1
 * table 000042.sst
 * size 4096
 * crc32c 0a1b2c3d
 * frozen-at 1795866708111651
 * previous 37
 * </pre>
 *
 * Invariants: flushes run one at a time, oldest memtable first, and number their tables
 * in that order, so a greater number is a later flush; {@code previous} is the number of
 * the table the store flushed just before this one (whether or not its link succeeded),
 * or -1 when none since the store opened with no record in its folder. A chain of records
 * whose {@code previous} each names the one before is a run of flushes without a gap.
 *
 * <p>
 * A snapshot of a store with incremental backups on also holds {@value #BASE_FILE}: the
 * number of the newest flushed table published before its links ({@code base 41}); every
 * table flushed up to it is in the snapshot (itself or compacted), and the first flush
 * after it has it as {@code previous}.
 *
 * @param table the table's file name ({@code 000042.sst})
 * @param size the table's size in bytes
 * @param crc32c the CRC32C of the table's content
 * @param frozenAt the store's time (microseconds) when the memtable was frozen: every
 * write the store took before it is in this table or an earlier one
 * @param previous the number of the table flushed before this one, or -1
 */
public record IncrementalBackup(String table, long size, long crc32c, long frozenAt, long previous) {

	/** The folder of the incremental backups in a data folder. */
	public static final String FOLDER = "backups";

	/** The suffix of a record file, after the table's name. */
	public static final String RECORD_SUFFIX = ".backup";

	/** The file of a snapshot that names the newest table flushed before it. */
	public static final String BASE_FILE = "BACKUP-BASE";

	private static final String MAGIC = "quorumkv-incremental-backup 1";

	public IncrementalBackup {
		Objects.requireNonNull(table, "table");
		if (DataFiles.tableNumber(table) < 0) {
			throw new IllegalArgumentException("not a table file name: " + table);
		}
	}

	/** The table's number. */
	public long number() {
		return DataFiles.tableNumber(this.table);
	}

	/** The name of this record's file. */
	public String recordFile() {
		return this.table + RECORD_SUFFIX;
	}

	/** Describes the table file {@code file}. */
	static IncrementalBackup of(Path file, long frozenAt, long previous) throws IOException {
		return new IncrementalBackup(file.getFileName().toString(), Files.size(file), crc32c(file), frozenAt, previous);
	}

	/**
	 * Writes the record into {@code dir} through {@code io} (a temporary file, forced,
	 * then renamed; the caller forces the folder).
	 */
	void write(FileIo io, Path dir) throws IOException {
		String text = MAGIC + "\ntable " + this.table + "\nsize " + this.size + "\ncrc32c "
				+ String.format("%08x", this.crc32c) + "\nfrozen-at " + this.frozenAt + "\nprevious " + this.previous
				+ "\n";
		Path target = dir.resolve(recordFile());
		Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
		byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
		try (AppendFile out = io.createOrTruncate(tmp)) {
			out.write(bytes, 0, bytes.length);
			out.sync();
		}
		io.rename(tmp, target);
	}

	/**
	 * Reads the record file {@code file}.
	 * @throws IOException naming the file when it is missing or malformed
	 */
	public static IncrementalBackup read(Path file) throws IOException {
		Map<String, String> fields = fields(file, MAGIC);
		try {
			IncrementalBackup record = new IncrementalBackup(field(fields, "table", file),
					Long.parseLong(field(fields, "size", file)), Long.parseLong(field(fields, "crc32c", file), 16),
					Long.parseLong(field(fields, "frozen-at", file)), Long.parseLong(field(fields, "previous", file)));
			if (!file.getFileName().toString().equals(record.recordFile())) {
				throw new IOException("record " + file + " describes " + record.table());
			}
			return record;
		}
		catch (IllegalArgumentException ex) {
			throw new IOException("record " + file + " is malformed: " + ex.getMessage(), ex);
		}
	}

	/**
	 * The records in {@code dir}, by table number (none when it does not exist).
	 * @throws IOException naming a malformed record
	 */
	public static List<IncrementalBackup> list(Path dir) throws IOException {
		List<IncrementalBackup> all = new ArrayList<>();
		if (!Files.isDirectory(dir)) {
			return all;
		}
		try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + RECORD_SUFFIX)) {
			for (Path file : files) {
				all.add(read(file));
			}
		}
		all.sort(Comparator.comparingLong(IncrementalBackup::number));
		return all;
	}

	/** Writes the base of a snapshot into its data folder {@code dir}. */
	static void writeBase(Path dir, long number) throws IOException {
		writeAtomically(dir.resolve(BASE_FILE), BASE_FILE + " 1\nbase " + number + "\n");
	}

	/**
	 * The base of the snapshot data folder {@code dir}: the newest table flushed before
	 * it, -1 when none was since its store opened; empty when the store took it without
	 * incremental backups.
	 * @throws IOException when the file is malformed
	 */
	public static OptionalLong readBase(Path dir) throws IOException {
		Path file = dir.resolve(BASE_FILE);
		if (!Files.exists(file)) {
			return OptionalLong.empty();
		}
		try {
			return OptionalLong.of(Long.parseLong(field(fields(file, BASE_FILE + " 1"), "base", file)));
		}
		catch (NumberFormatException ex) {
			throw new IOException(file + " is malformed: " + ex.getMessage(), ex);
		}
	}

	/** The CRC32C of a file's content, read in pieces. */
	public static long crc32c(Path file) throws IOException {
		CRC32C crc = new CRC32C();
		byte[] buffer = new byte[64 << 10];
		try (InputStream in = Files.newInputStream(file)) {
			int n;
			while ((n = in.read(buffer)) > 0) {
				crc.update(buffer, 0, n);
			}
		}
		return crc.getValue();
	}

	static Map<String, String> fields(Path file, String magic) throws IOException {
		List<String> lines;
		try {
			lines = Files.readAllLines(file, StandardCharsets.UTF_8);
		}
		catch (NoSuchFileException ex) {
			throw new IOException(file + " is missing", ex);
		}
		if (lines.isEmpty() || !lines.get(0).equals(magic)) {
			throw new IOException(file + " is malformed: it does not start with '" + magic + "'");
		}
		Map<String, String> fields = new LinkedHashMap<>();
		for (String line : lines.subList(1, lines.size())) {
			int space = line.indexOf(' ');
			if (space <= 0) {
				throw new IOException(file + " is malformed: line '" + line + "'");
			}
			fields.put(line.substring(0, space), line.substring(space + 1));
		}
		return fields;
	}

	static String field(Map<String, String> fields, String name, Path file) throws IOException {
		String value = fields.get(name);
		if (value == null) {
			throw new IOException(file + " is malformed: no " + name);
		}
		return value;
	}

	private static void writeAtomically(Path target, String text) throws IOException {
		Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
		try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE,
				StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
			channel.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
			channel.force(true);
		}
		Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
	}

}
