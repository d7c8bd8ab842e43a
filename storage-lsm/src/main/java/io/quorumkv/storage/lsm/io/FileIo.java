package io.quorumkv.storage.lsm.io;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Every file operation of the engine on its data folder: WAL segments, tables, the
 * manifest, the incremental backups' links and records, their temporary files, renames,
 * deletions and folder forces all go through one instance, so that tests can put a
 * fault-injecting file layer under the engine (lost power, torn writes, failing
 * {@code write}, {@code fsync} or {@code rename}, flipped bytes). Production uses
 * {@link #real()}: plain NIO, one interface call per operation (a monomorphic call the
 * JIT inlines).
 *
 * <p>
 * The engine keeps to what these operations promise on a POSIX file system, and nothing
 * more: data written is durable only after {@link AppendFile#sync()}; a created, renamed
 * or deleted name only after {@link #syncDirectory} of its folder; {@link #rename} is
 * atomic. Files are only ever appended to (or truncated), never rewritten in place.
 *
 * <pre>{@code
 * try (AppendFile out = io.createNew(dir.resolve("wal-000007.log"))) {
 *     out.write(record, 0, record.length);
 *     out.sync();
 * }
 * io.syncDirectory(dir);
 * }</pre>
 */
public interface FileIo {

	/** Plain NIO: what the engine uses outside tests. */
	static FileIo real() {
		return RealFileIo.INSTANCE;
	}

	/** A new, empty file written from its start; fails if the file exists. */
	AppendFile createNew(Path path) throws IOException;

	/** An empty file written from its start: created, or truncated if it exists. */
	AppendFile createOrTruncate(Path path) throws IOException;

	/** The whole content of a file. */
	byte[] readAll(Path path) throws IOException;

	/** The whole file as a read-only segment that lives as long as {@code arena}. */
	MemorySegment map(Path path, Arena arena) throws IOException;

	/** Cuts the file to {@code length} bytes and forces it. */
	void truncate(Path path, long length) throws IOException;

	/** Renames atomically, replacing {@code to} if it exists. */
	void rename(Path from, Path to) throws IOException;

	/**
	 * Gives the file {@code existing} a second name {@code link} (a hard link, in the
	 * same file system): both name one file, and the link outlives a deletion of the
	 * other name. Fails if {@code link} exists. Durable only after {@link #syncDirectory}
	 * of the link's folder. By default made on the file system directly; a layer that
	 * keeps track of names (a fault-injecting one) overrides it.
	 */
	default void link(Path existing, Path link) throws IOException {
		Files.createLink(link, existing);
	}

	/** Deletes the file if it exists; whether it did. */
	boolean deleteIfExists(Path path) throws IOException;

	/**
	 * Creates {@code folder} and the folders above it that are missing; nothing when it
	 * exists. Like a file's name, a folder's is durable only after {@link #syncDirectory}
	 * of the folder it is in.
	 */
	default void createDirectories(Path folder) throws IOException {
		Files.createDirectories(folder);
	}

	/** Forces the folder's entries (creations, renames, deletions) to the disk. */
	void syncDirectory(Path dir) throws IOException;

	/** The files of a folder, in no particular order. */
	List<Path> list(Path dir) throws IOException;

	boolean exists(Path path);

}
