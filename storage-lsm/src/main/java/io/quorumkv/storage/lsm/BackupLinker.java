package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import io.quorumkv.storage.lsm.compaction.Levels;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.sstable.SsTable;
import io.quorumkv.storage.lsm.sstable.TableDigest;
import org.jspecify.annotations.Nullable;

/**
 * Incremental backups ({@link LsmOptions#incrementalBackups()}): every table a flush
 * writes is hard-linked into {@code backups/} once it is durable and in the manifest:
 * under a temporary name while the flush still holds the manifest lock (so no compaction
 * can have deleted it, nor made its deletion durable before the link), then, once the
 * flush has released its memtable, its checksum record ({@link IncrementalBackup}) is
 * written and the link renamed to the table's name. Compaction outputs are not linked:
 * they hold nothing the flushed tables did not, minus shadowed versions.
 *
 * <p>
 * A link never changes the live store: tables are immutable, and a compaction that drops
 * a table deletes only its name in the data folder. A failed link is logged and counted
 * ({@code backup.failures}) and the store goes on; the next record's {@code previous}
 * still names the missed table, so a restore sees the gap. A crash between the two steps
 * is caught up when the store opens again ({@link #open}). Runs on the flush thread (and
 * at open and close, with no flush running), so one at a time.
 */
final class BackupLinker {

	private static final System.Logger LOG = System.getLogger(BackupLinker.class.getName());

	/** The suffix of a table's link until its record is written. */
	private static final String TMP = ".tmp";

	private final FileIo io;

	private final Path dataDir;

	private final Path folder;

	private final EngineStats stats;

	/** The number of the table flushed last, or -1; written on the flush thread only. */
	private volatile long lastFlushed;

	/**
	 * The time of the newest record (0 without one), a lower bound of any later freeze.
	 */
	private long lastFrozenAt;

	/** Links the WAL segments into {@code backups/wal/}. */
	private final WalLinker segments;

	private BackupLinker(FileIo io, Path dataDir, EngineStats stats, long lastFlushed, long lastFrozenAt,
			WalLinker segments) {
		this.segments = segments;
		this.io = io;
		this.dataDir = dataDir;
		this.folder = dataDir.resolve(IncrementalBackup.FOLDER);
		this.stats = stats;
		this.lastFlushed = lastFlushed;
		this.lastFrozenAt = lastFrozenAt;
	}

	/**
	 * Opens {@code backups/} of {@code dataDir} and catches up with a crash between a
	 * flush and its link, so that the chain has no gap:
	 * <ul>
	 * <li>a table's link left under its temporary name ({@code 000050.sst.tmp}: claimed,
	 * its record not written) is finished, with the newest record's freeze as its own (a
	 * lower bound): it may be the only copy left, once a compaction dropped the
	 * table;</li>
	 * <li>a level-0 table newer than every record (a flush the crash cut off before its
	 * link) is linked and recorded the same way, in the order of the flushes;</li>
	 * <li>a record without its table gets it from its temporary link or the live table,
	 * or is removed when both are gone (the next record still names it as
	 * {@code previous}, so a restore stops there);</li>
	 * <li>a record's temporary file is removed (the record is written again).</li>
	 * </ul>
	 * A store that had no record starts a new chain with its level-0 tables. Then the WAL
	 * segments' links are caught up the same way ({@link WalLinker#open}).
	 */
	static BackupLinker open(FileIo io, Path dataDir, EngineStats stats, Levels levels) throws IOException {
		Path folder = dataDir.resolve(IncrementalBackup.FOLDER);
		if (!Files.isDirectory(folder)) {
			Files.createDirectories(folder);
			io.syncDirectory(dataDir);
		}
		Map<Long, Path> claimed = new TreeMap<>();
		for (Path file : io.list(folder)) {
			String name = file.getFileName().toString();
			long table = name.endsWith(TMP) ? DataFiles.tableNumber(name.substring(0, name.length() - TMP.length()))
					: -1;
			if (table >= 0) {
				claimed.put(table, file);
			}
			else if (name.endsWith(TMP)) {
				io.deleteIfExists(file);
			}
		}
		long last = -1;
		long frozenAt = 0;
		for (IncrementalBackup record : IncrementalBackup.list(folder)) {
			// Numbered whether or not its table is still there: a later record names it.
			last = Math.max(last, record.number());
			if (repair(io, dataDir, record, claimed.remove(record.number()), stats)) {
				frozenAt = Math.max(frozenAt, record.frozenAt());
			}
		}
		BackupLinker linker = new BackupLinker(io, dataDir, stats, last, frozenAt, WalLinker.open(io, dataDir, stats));
		Map<Long, Path> cutOff = new TreeMap<>();
		for (Map.Entry<Long, Path> tmp : claimed.entrySet()) {
			if (tmp.getKey() > last) {
				cutOff.put(tmp.getKey(), tmp.getValue());
			}
			else {
				io.deleteIfExists(tmp.getValue());
			}
		}
		for (SsTable table : levels.level(0)) {
			if (table.number() > last) {
				cutOff.putIfAbsent(table.number(), table.path());
			}
		}
		for (Map.Entry<Long, Path> table : cutOff.entrySet()) {
			LOG.log(Level.INFO, "linking table {0} into {1}: a crash came before its link", table.getKey(), folder);
			linker.finish(linker.claim(table.getKey(), table.getValue(), linker.lastFrozenAt));
		}
		io.syncDirectory(folder);
		return linker;
	}

	/**
	 * Gives {@code record} its table back when a crash left it without: from its
	 * temporary link {@code tmp} (the crash came between the record and the rename), or
	 * the live table; removes the record when both are gone. A failure is logged and
	 * counted.
	 * @return whether the record has its table
	 */
	private static boolean repair(FileIo io, Path dataDir, IncrementalBackup record, @Nullable Path tmp,
			EngineStats stats) {
		Path folder = dataDir.resolve(IncrementalBackup.FOLDER);
		Path linked = folder.resolve(record.table());
		Path live = dataDir.resolve(record.table());
		try {
			if (io.exists(linked)) {
				if (tmp != null) {
					io.deleteIfExists(tmp);
				}
			}
			else if (tmp != null) {
				io.rename(tmp, linked);
			}
			else if (io.exists(live)) {
				io.link(live, linked);
			}
			else {
				LOG.log(Level.WARNING, "removing incremental backup record {0}: its table is gone",
						folder.resolve(record.recordFile()));
				io.deleteIfExists(folder.resolve(record.recordFile()));
				return false;
			}
			return true;
		}
		catch (IOException | RuntimeException ex) {
			stats.backupFailures.increment();
			LOG.log(Level.WARNING, "could not give incremental backup record " + folder.resolve(record.recordFile())
					+ " its table back", ex);
			return false;
		}
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
	 * Links {@code table}, just published by a flush, under a temporary name and forces
	 * {@code backups/}: called with the manifest lock held, before any compaction can
	 * drop and delete the table (and make its deletion durable before the link is). Never
	 * throws.
	 * @return the link to finish, or null when it failed (logged and counted)
	 */
	@Nullable Pending claim(SsTable table, long frozenAt) {
		return claim(table.number(), table.path(), frozenAt);
	}

	/**
	 * Claims the flushed table {@code number}, whose file is {@code file}: the live
	 * table, or its temporary link left by a crash (then renamed, not linked).
	 */
	private @Nullable Pending claim(long number, Path file, long frozenAt) {
		long previous = this.lastFlushed;
		this.lastFlushed = number;
		this.lastFrozenAt = Math.max(this.lastFrozenAt, frozenAt);
		String name = DataFiles.table(this.folder, number).getFileName().toString();
		Path link = this.folder.resolve(name + TMP);
		try {
			if (!file.equals(link)) {
				this.io.deleteIfExists(link);
				this.io.link(file, link);
				this.io.syncDirectory(this.folder);
			}
			return new Pending(name, link, this.lastFrozenAt, previous);
		}
		catch (IOException | RuntimeException ex) {
			failed(name, ex);
			return null;
		}
	}

	/**
	 * Writes the record of a claimed table and gives its link the table's name, off the
	 * manifest lock (it may read the table for its checksum). Never throws.
	 */
	void finish(@Nullable Pending pending) {
		if (pending == null) {
			return;
		}
		try {
			long size = Files.size(pending.link());
			IncrementalBackup record = new IncrementalBackup(pending.name(), size, checksum(pending, size),
					pending.frozenAt(), pending.previous());
			record.write(this.io, this.folder);
			this.io.rename(pending.link(), this.folder.resolve(pending.name()));
			this.io.syncDirectory(this.folder);
			this.stats.backupLinks.increment();
		}
		catch (IOException | RuntimeException ex) {
			failed(pending.name(), ex);
		}
	}

	/**
	 * The CRC32C of a claimed table: from the digest its writer left beside the live
	 * table (the same file as the link: a table's number is never reused) when that
	 * digest is of the link's size, so a flush's table is not read again; else summed
	 * from the link (a table written before digests, or compacted away and its digest
	 * deleted since).
	 */
	private long checksum(Pending pending, long size) throws IOException {
		TableDigest digest = TableDigest.readBeside(this.dataDir.resolve(pending.name()));
		return (digest != null && digest.length() == size) ? digest.crc32c() : IncrementalBackup.crc32c(pending.link());
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
			this.io.deleteIfExists(this.folder.resolve(name + TMP));
			this.io.deleteIfExists(this.folder.resolve(name + IncrementalBackup.RECORD_SUFFIX));
			this.io.deleteIfExists(this.folder.resolve(name));
		}
		catch (IOException cleanup) {
			ex.addSuppressed(cleanup);
		}
	}

	/** The linker of the WAL segments. */
	WalLinker segments() {
		return this.segments;
	}

	Path folder() {
		return this.folder;
	}

	Path dataDir() {
		return this.dataDir;
	}

}
