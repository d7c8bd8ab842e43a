package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.quorumkv.storage.lsm.compaction.Levels;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.sstable.SsTable;
import org.jspecify.annotations.Nullable;

/**
 * Incremental backups ({@link LsmOptions#incrementalBackups()}): every table a flush
 * writes is hard-linked into {@code backups/} once it is durable and in the manifest:
 * under a temporary name while the flush still holds the manifest lock (so no compaction
 * can have deleted it), then, once the flush has released its memtable, its checksum
 * record ({@link IncrementalBackup}) is written and the link renamed to the table's name.
 * Compaction outputs are not linked: they hold nothing the flushed tables did not, minus
 * shadowed versions.
 *
 * <p>
 * A link never changes the live store: tables are immutable, and a compaction that drops
 * a table deletes only its name in the data folder. A failed link is logged and counted
 * ({@code backup.failures}) and the store goes on; the next record's {@code previous}
 * still names the missed table, so a restore sees the gap. Runs on the flush thread (and
 * at open and close, with no flush running), so one at a time.
 */
final class BackupLinker {

	private static final System.Logger LOG = System.getLogger(BackupLinker.class.getName());

	private final FileIo io;

	private final Path dataDir;

	private final Path folder;

	private final EngineStats stats;

	/** The number of the table flushed last, or -1; written on the flush thread only. */
	private volatile long lastFlushed;

	/** The time of the newest record, a lower bound of any later freeze. */
	private long lastFrozenAt;

	private BackupLinker(FileIo io, Path dataDir, EngineStats stats, long lastFlushed, long lastFrozenAt) {
		this.io = io;
		this.dataDir = dataDir;
		this.folder = dataDir.resolve(IncrementalBackup.FOLDER);
		this.stats = stats;
		this.lastFlushed = lastFlushed;
		this.lastFrozenAt = lastFrozenAt;
	}

	/**
	 * Opens {@code backups/} of {@code dataDir} and catches up with a crash between a
	 * flush and its link: a record without its table gets it linked again (or is removed
	 * when the table is gone), and a level-0 table newer than every record (a flush the
	 * crash cut off before its record) is linked, with the newest record's time as its
	 * freeze (a lower bound). A store that had no record starts a new chain.
	 */
	static BackupLinker open(FileIo io, Path dataDir, EngineStats stats, Levels levels) throws IOException {
		Path folder = Files.createDirectories(dataDir.resolve(IncrementalBackup.FOLDER));
		for (Path tmp : io.list(folder)) {
			if (tmp.getFileName().toString().endsWith(".tmp")) {
				io.deleteIfExists(tmp);
			}
		}
		List<IncrementalBackup> records = IncrementalBackup.list(folder);
		long last = -1;
		long frozenAt = Long.MIN_VALUE;
		for (IncrementalBackup record : records) {
			Path linked = folder.resolve(record.table());
			if (!Files.exists(linked)) {
				Path live = dataDir.resolve(record.table());
				if (Files.exists(live)) {
					Files.createLink(linked, live);
				}
				else {
					LOG.log(Level.WARNING, "removing incremental backup record {0}: its table is gone",
							folder.resolve(record.recordFile()));
					io.deleteIfExists(folder.resolve(record.recordFile()));
					continue;
				}
			}
			last = Math.max(last, record.number());
			frozenAt = Math.max(frozenAt, record.frozenAt());
		}
		BackupLinker linker = new BackupLinker(io, dataDir, stats, last, frozenAt);
		if (!records.isEmpty()) {
			Set<Long> recorded = new HashSet<>();
			records.forEach((r) -> recorded.add(r.number()));
			long newest = last;
			levels.level(0)
				.stream()
				.filter((t) -> t.number() > newest && !recorded.contains(t.number()))
				.sorted(java.util.Comparator.comparingLong(SsTable::number))
				.forEach((t) -> linker.linkFlushed(t, linker.lastFrozenAt));
		}
		io.syncDirectory(folder);
		return linker;
	}

	/** The number of the table flushed last, or -1 (a snapshot's base). */
	long lastFlushed() {
		return this.lastFlushed;
	}

	/**
	 * A flushed table linked under a temporary name, its record not yet written.
	 *
	 * @param name the table's file name
	 * @param link the temporary link in {@code backups/}
	 * @param frozenAt when its memtable was frozen
	 * @param previous the table flushed before it, or -1
	 */
	record Pending(String name, Path link, long frozenAt, long previous) {
	}

	/**
	 * Links {@code table}, just published by a flush, under a temporary name: called with
	 * the manifest lock held, before any compaction can drop and delete the table, and
	 * cheap (one link). Never throws.
	 * @return the link to finish, or null when it failed (logged and counted)
	 */
	@Nullable Pending claim(SsTable table, long frozenAt) {
		long previous = this.lastFlushed;
		this.lastFlushed = table.number();
		this.lastFrozenAt = Math.max(this.lastFrozenAt, frozenAt);
		String name = table.path().getFileName().toString();
		Path link = this.folder.resolve(name + ".tmp");
		try {
			this.io.deleteIfExists(link);
			Files.createLink(link, table.path());
			return new Pending(name, link, this.lastFrozenAt, previous);
		}
		catch (IOException | RuntimeException ex) {
			failed(name, ex);
			return null;
		}
	}

	/**
	 * Writes the record of a claimed table and gives its link the table's name, off the
	 * manifest lock (it reads the table for its checksum). Never throws.
	 */
	void finish(@Nullable Pending pending) {
		if (pending == null) {
			return;
		}
		try {
			IncrementalBackup record = new IncrementalBackup(pending.name(), Files.size(pending.link()),
					IncrementalBackup.crc32c(pending.link()), pending.frozenAt(), pending.previous());
			record.write(this.folder);
			Files.move(pending.link(), this.folder.resolve(pending.name()), StandardCopyOption.ATOMIC_MOVE);
			this.io.syncDirectory(this.folder);
			this.stats.backupLinks.increment();
		}
		catch (IOException | RuntimeException ex) {
			failed(pending.name(), ex);
		}
	}

	/** Claims and finishes {@code table} at once (no compaction running). */
	void linkFlushed(SsTable table, long frozenAt) {
		finish(claim(table, frozenAt));
	}

	private void failed(String name, Exception ex) {
		this.stats.backupFailures.increment();
		LOG.log(Level.WARNING, "could not link table " + this.dataDir.resolve(name) + " into " + this.folder
				+ " (incremental backups): a restore from them stops before it", ex);
		try {
			// Nothing is left half done: a table without its record fails verification.
			this.io.deleteIfExists(this.folder.resolve(name + ".tmp"));
			this.io.deleteIfExists(this.folder.resolve(name + IncrementalBackup.RECORD_SUFFIX));
			this.io.deleteIfExists(this.folder.resolve(name));
		}
		catch (IOException cleanup) {
			ex.addSuppressed(cleanup);
		}
	}

	Path folder() {
		return this.folder;
	}

	Path dataDir() {
		return this.dataDir;
	}

}
