package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FileIo;

/**
 * Incremental backups of the WAL: every segment is hard-linked into {@code backups/wal/}
 * with its record ({@link WalBackup}) when it is created, before it takes a write. The
 * link names the segment's file, so it sees every record appended to it and outlives the
 * segment's deletion after its memtable's flush; a restore reads the versions a memtable
 * overwrote from it (docs/backup.md). Segments are never reused and never rewritten: a
 * torn tail cut at a restart or a cut back after a failed force cuts the link the same
 * way, to a whole prefix of the log, so a hard link is enough and nothing is copied.
 *
 * <p>
 * Segments are numbered, created and linked under the engine's segment lock, one at a
 * time, so each record's {@code previous} is the segment created just before it. A failed
 * link is logged and counted ({@code backup.wal.failures}) and the store goes on; the
 * next record still names the missed segment, so a restore sees the gap.
 */
final class WalLinker {

	private static final System.Logger LOG = System.getLogger(WalLinker.class.getName());

	private final FileIo io;

	private final Path folder;

	private final EngineStats stats;

	/** The segment created last, or -1. Guarded by the engine's segment lock. */
	private long lastSegment;

	private WalLinker(FileIo io, Path folder, EngineStats stats, long lastSegment) {
		this.io = io;
		this.folder = folder;
		this.stats = stats;
		this.lastSegment = lastSegment;
	}

	/**
	 * Opens {@code backups/wal/} of {@code dataDir} before the engine takes a write, and
	 * catches up with a crash: temporary files and links without a record are removed; a
	 * record whose link is missing gets the live segment, or an empty file when the
	 * segment is gone (it was created and dropped without a write: a segment takes writes
	 * only once linked); every live segment newer than the newest record (created at this
	 * start, or cut off by a crash before its link) is linked, in number order.
	 */
	static WalLinker open(FileIo io, Path dataDir, EngineStats stats) throws IOException {
		Path folder = dataDir.resolve(IncrementalBackup.FOLDER).resolve(WalBackup.FOLDER);
		ensureFolder(io, folder);
		long last = -1;
		List<WalBackup> records = WalBackup.list(folder);
		Set<String> recorded = new HashSet<>();
		records.forEach((record) -> recorded.add(record.segment()));
		for (Path file : io.list(folder)) {
			String name = file.getFileName().toString();
			if (name.endsWith(".tmp") || (WalBackup.isSegment(name) && !recorded.contains(name))) {
				// A record being written, or a link whose record was removed (by
				// clear-backups, which removes the record first) when a crash came.
				io.deleteIfExists(file);
			}
		}
		for (WalBackup record : records) {
			last = Math.max(last, record.number());
			Path link = folder.resolve(record.segment());
			if (io.exists(link)) {
				continue;
			}
			Path live = dataDir.resolve(record.segment());
			try {
				if (io.exists(live)) {
					io.link(live, link);
				}
				else {
					try (AppendFile empty = io.createNew(link)) {
						empty.sync();
					}
				}
			}
			catch (IOException | RuntimeException ex) {
				stats.backupWalFailures.increment();
				LOG.log(Level.WARNING,
						"could not give WAL backup record " + folder.resolve(record.recordFile()) + " its segment back",
						ex);
			}
		}
		WalLinker linker = new WalLinker(io, folder, stats, last);
		Map<Long, Path> newer = new TreeMap<>();
		for (Path file : io.list(dataDir)) {
			long number = DataFiles.walNumber(file.getFileName().toString());
			if (number > last) {
				newer.put(number, file);
			}
		}
		for (Map.Entry<Long, Path> segment : newer.entrySet()) {
			linker.link(segment.getValue(), segment.getKey());
		}
		io.syncDirectory(folder);
		return linker;
	}

	/**
	 * A number above every segment linked in {@code backups/wal/} of {@code dataDir} (1
	 * without one): a segment can be linked and then deleted unused before the manifest
	 * records a file number past it.
	 */
	static long nextNumber(FileIo io, Path dataDir) throws IOException {
		Path folder = dataDir.resolve(IncrementalBackup.FOLDER).resolve(WalBackup.FOLDER);
		long next = 1;
		if (Files.isDirectory(folder)) {
			for (Path file : io.list(folder)) {
				String name = file.getFileName().toString();
				int dot = name.indexOf(".log");
				if (dot > 0) {
					next = Math.max(next, DataFiles.walNumber(name.substring(0, dot + 4)) + 1);
				}
			}
		}
		return next;
	}

	private static void ensureFolder(FileIo io, Path folder) throws IOException {
		if (!Files.isDirectory(folder)) {
			Files.createDirectories(folder);
			io.syncDirectory(folder.getParent());
		}
	}

	/**
	 * Links the new, empty segment {@code file} numbered {@code number}: its record
	 * first, then the link, then forces the folder. Called under the engine's segment
	 * lock, before the segment takes a write. Never throws.
	 */
	void link(Path file, long number) {
		long previous = this.lastSegment;
		this.lastSegment = number;
		WalBackup record = new WalBackup(file.getFileName().toString(), previous);
		Path link = this.folder.resolve(record.segment());
		try {
			ensureFolder(this.io, this.folder);
			record.write(this.io, this.folder);
			this.io.link(file, link);
			this.io.syncDirectory(this.folder);
			this.stats.backupWalLinks.increment();
		}
		catch (IOException | RuntimeException ex) {
			this.stats.backupWalFailures.increment();
			LOG.log(Level.WARNING, "could not link WAL segment " + file + " into " + this.folder
					+ " (incremental backups): a restore between two flushes stops before it", ex);
			try {
				// Nothing half done: a record without its segment fails verification.
				this.io.deleteIfExists(this.folder.resolve(record.recordFile()));
				this.io.deleteIfExists(link);
			}
			catch (IOException cleanup) {
				ex.addSuppressed(cleanup);
			}
		}
	}

}
