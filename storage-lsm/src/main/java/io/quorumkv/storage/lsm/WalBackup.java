package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.manifest.Manifest;
import io.quorumkv.storage.lsm.wal.WalReader;

/**
 * The record of one WAL segment linked into {@code backups/wal/} of a data folder with
 * {@link LsmOptions#incrementalBackups()} on: the segment's file name and the segment the
 * store created before it. It is written beside the link as {@code wal-000043.log.backup}
 * (a temporary file, forced, renamed) before the link takes the segment's name, and the
 * link is made when the segment is created, before it takes any write: the link names the
 * same file, so it sees every record appended to it, and it outlives the segment's
 * deletion once its memtable is flushed.
 *
 * <pre>
 * quorumkv-wal-backup 1
 * segment wal-000043.log
 * previous 40
 * </pre>
 *
 * Invariants: segments are numbered, created and linked one at a time, so a greater
 * number is a later segment, and {@code previous} is the number of the segment created
 * just before this one (whether or not its link succeeded), or -1 when none since the
 * store opened with no record. A segment holds no size or checksum here: it grows after
 * its record, and every WAL record carries its own checksums ({@link #scan}). A segment
 * is only ever appended to, or cut back to a shorter whole length (a torn tail at a
 * restart, a failed force), never rewritten, so its link is always a prefix of the
 * store's log.
 *
 * @param segment the segment's file name ({@code wal-000043.log})
 * @param previous the number of the segment created before this one, or -1
 */
public record WalBackup(String segment, long previous) {

	/** The folder of the segments' links, inside {@link IncrementalBackup#FOLDER}. */
	public static final String FOLDER = "wal";

	private static final String MAGIC = "quorumkv-wal-backup 1";

	public WalBackup {
		Objects.requireNonNull(segment, "segment");
		if (DataFiles.walNumber(segment) < 0) {
			throw new IllegalArgumentException("not a WAL segment file name: " + segment);
		}
	}

	/** The segment's number. */
	public long number() {
		return DataFiles.walNumber(this.segment);
	}

	/** The name of this record's file. */
	public String recordFile() {
		return this.segment + IncrementalBackup.RECORD_SUFFIX;
	}

	/** Whether {@code name} is a segment's file name. */
	public static boolean isSegment(String name) {
		return DataFiles.walNumber(name) >= 0;
	}

	/**
	 * Writes the record into {@code dir} through {@code io} (a temporary file, forced,
	 * then renamed; the caller forces the folder).
	 */
	void write(FileIo io, Path dir) throws IOException {
		byte[] bytes = (MAGIC + "\nsegment " + this.segment + "\nprevious " + this.previous + "\n")
			.getBytes(StandardCharsets.UTF_8);
		Path target = dir.resolve(recordFile());
		Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
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
	public static WalBackup read(Path file) throws IOException {
		Map<String, String> fields = IncrementalBackup.fields(file, MAGIC);
		try {
			WalBackup record = new WalBackup(IncrementalBackup.field(fields, "segment", file),
					Long.parseLong(IncrementalBackup.field(fields, "previous", file)));
			if (!file.getFileName().toString().equals(record.recordFile())) {
				throw new IOException("record " + file + " describes " + record.segment());
			}
			return record;
		}
		catch (IllegalArgumentException ex) {
			throw new IOException("record " + file + " is malformed: " + ex.getMessage(), ex);
		}
	}

	/**
	 * The records in {@code dir}, by segment number (none when it does not exist).
	 * @throws IOException naming a malformed record
	 */
	public static List<WalBackup> list(Path dir) throws IOException {
		List<WalBackup> all = new ArrayList<>();
		if (!Files.isDirectory(dir)) {
			return all;
		}
		try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + IncrementalBackup.RECORD_SUFFIX)) {
			for (Path file : files) {
				all.add(read(file));
			}
		}
		all.sort(Comparator.comparingLong(WalBackup::number));
		return all;
	}

	/**
	 * The base of the LSM snapshot (or closed data folder) {@code dir} for its WAL
	 * segments: the oldest segment its manifest still needed ({@code minLiveWal}). Every
	 * write not in its tables is in a segment numbered from it on.
	 * @throws CorruptedStorageException when the manifest is damaged
	 * @throws IOException when there is no manifest or it cannot be read
	 */
	public static long base(Path dir) throws IOException {
		Manifest manifest = Manifest.read(FileIo.real(), dir);
		if (manifest == null) {
			throw new IOException("no " + Manifest.FILE_NAME + " in " + dir + ": not an LSM snapshot");
		}
		return manifest.minLiveWal();
	}

	/**
	 * What a {@link #scan} found.
	 *
	 * @param records whole records read
	 * @param validLength bytes of those records
	 * @param tornTail whether the file ends in a torn record (a copy made while the store
	 * appended to it, or a crash's last write), which was not read
	 */
	public record Scan(long records, long validLength, boolean tornTail) {
	}

	/**
	 * Reads the linked (or copied) segment {@code file} into {@code sink} without
	 * changing it, with the WAL's own reader: every record's checksums are verified.
	 * @throws CorruptedStorageException naming file and offset when a record is damaged
	 * (a torn tail is reported, not thrown)
	 */
	public static Scan scan(Path file, Consumer<Entry> sink) throws IOException {
		WalReader.Replay read = WalReader.read(FileIo.real(), file, sink);
		return new Scan(read.records(), read.validLength(), read.tornTail());
	}

}
