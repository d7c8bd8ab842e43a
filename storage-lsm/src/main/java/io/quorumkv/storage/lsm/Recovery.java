package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import io.quorumkv.storage.Expiry;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.lsm.compaction.Levels;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.manifest.Manifest;
import io.quorumkv.storage.lsm.memtable.MemTable;
import io.quorumkv.storage.lsm.sstable.BlockCache;
import io.quorumkv.storage.lsm.sstable.SsTable;
import io.quorumkv.storage.lsm.wal.WalReader;
import io.quorumkv.storage.lsm.wal.WalWriter;

/**
 * Opens a data folder: takes its lock, deletes {@code *.tmp} leftovers and table files
 * the manifest does not name (a crash mid-flush or mid-compaction), opens the named
 * tables, replays the WAL segments not yet flushed (dropping a torn last record) into a
 * memtable, and starts a fresh WAL segment.
 *
 * <p>
 * The replayed memtable is served at once as a frozen one and flushed in the background
 * like any other, its segments kept until it is in a table: the manifest's oldest live
 * segment stays the first replayed one, so a crash before that flush replays them again.
 * Writing it to a table before serving took 0.7-3.0 s of a restart with a full memtable
 * (docs/performance.md, "Recovery").
 */
final class Recovery {

	private static final System.Logger LOG = System.getLogger(Recovery.class.getName());

	private Recovery() {
	}

	static LsmEngine open(LsmOptions options, FileIo io) throws IOException {
		return open(options, io, Clock.systemUTC());
	}

	static LsmEngine open(LsmOptions options, FileIo io, Clock clock) throws IOException {
		return open(options, io, clock, PurgePolicy.ANY);
	}

	/**
	 * As {@link #open(LsmOptions, FileIo, Clock)}, purging by {@code purgePolicy} from
	 * the start.
	 */
	static LsmEngine open(LsmOptions options, FileIo io, Clock clock, PurgePolicy purgePolicy) throws IOException {
		Path dir = options.directory();
		Files.createDirectories(dir);
		FileChannel lockChannel = FileChannel.open(dir.resolve(DataFiles.LOCK), StandardOpenOption.CREATE,
				StandardOpenOption.WRITE);
		FileLock lock;
		try {
			lock = lockChannel.tryLock();
		}
		catch (OverlappingFileLockException ex) {
			lock = null;
		}
		if (lock == null) {
			lockChannel.close();
			throw new StorageException("LSM storage in " + dir + " is already open");
		}
		List<SsTable> opened = new ArrayList<>();
		BlockCache cache = BlockCache.create(options.blockCacheSize());
		long start = System.nanoTime();
		try {
			Manifest manifest = Manifest.read(io, dir);
			long next = (manifest != null) ? manifest.nextFileNumber() : 1;
			long minLiveWal = (manifest != null) ? manifest.minLiveWal() : 0;
			long watermark = Math.max((manifest != null) ? manifest.expiryWatermark() : Long.MIN_VALUE,
					Expiry.nowMicros(clock));
			Levels levels = Levels.empty(options.maxLevels());
			Set<Long> live = new HashSet<>();
			for (Manifest.TableRef ref : (manifest != null) ? manifest.tables() : List.<Manifest.TableRef>of()) {
				if (ref.level() >= options.maxLevels()) {
					throw new StorageException("table " + ref.number() + " is at level " + ref.level()
							+ " but maxLevels is " + options.maxLevels());
				}
				SsTable table = SsTable.open(io, DataFiles.table(dir, ref.number()), ref.number(), cache);
				opened.add(table);
				levels = levels.withTable(ref.level(), table);
				live.add(ref.number());
			}
			long tablesOpened = System.nanoTime();
			int tableCount = opened.size();
			TreeMap<Long, Path> wals = new TreeMap<>();
			for (Path file : io.list(dir)) {
				String name = file.getFileName().toString();
				long table = DataFiles.tableNumber(name);
				long wal = DataFiles.walNumber(name);
				// A table's digest goes with it: one without it is a builder's left over.
				long digest = DataFiles.digestTableNumber(name);
				next = Math.max(next, Math.max(table, wal) + 1);
				if (name.endsWith(".tmp") || (table >= 0 && !live.contains(table)) || (wal >= 0 && wal < minLiveWal)
						|| (digest >= 0 && !live.contains(digest))) {
					LOG.log(Level.INFO, "deleting leftover file {0}", file);
					io.deleteIfExists(file);
				}
				else if (wal >= 0) {
					wals.put(wal, file);
				}
			}
			if (options.incrementalBackups()) {
				// A segment linked, then deleted unused (a spare), keeps its number
				// taken:
				// a new segment of that number would find its name linked already.
				next = Math.max(next, WalLinker.nextNumber(io, dir));
			}
			MemTable replayed = new MemTable(options.memtableSize());
			long records = 0;
			long replayedBytes = 0;
			for (Path wal : wals.values()) {
				WalReader.Replay replay = WalReader.replay(io, wal, replayed::put);
				records += replay.records();
				replayedBytes += replay.validLength();
				LOG.log(Level.INFO, "replayed {0} records from {1}", replay.records(), wal);
			}
			long walsReplayed = System.nanoTime();
			// The replayed memtable gets an (empty) segment of its own, numbered
			// below the active one: segments follow the memtables' order.
			List<MemTableSlot> frozen = new ArrayList<>();
			long liveFrom = Long.MAX_VALUE;
			if (!replayed.isEmpty()) {
				long number = next++;
				frozen.add(new MemTableSlot(replayed, WalWriter.create(io, DataFiles.wal(dir, number), number),
						List.copyOf(wals.values()), wals.firstKey(), replayedBytes, watermark));
				liveFrom = wals.firstKey();
			}
			long activeNumber = next++;
			WalWriter active = WalWriter.create(io, DataFiles.wal(dir, activeNumber), activeNumber);
			liveFrom = Math.min(liveFrom, activeNumber);
			List<Manifest.TableRef> refs = new ArrayList<>();
			for (int level = 0; level < levels.count(); level++) {
				for (SsTable t : levels.level(level)) {
					refs.add(new Manifest.TableRef(t.number(), level));
				}
			}
			new Manifest(next, liveFrom, refs, watermark).write(io, dir);
			if (frozen.isEmpty()) {
				// Nothing replayed (no write, or only a torn one): nothing to keep.
				for (Path wal : wals.values()) {
					io.deleteIfExists(wal);
				}
			}
			io.syncDirectory(dir);
			long done = System.nanoTime();
			// One line a restart can be timed by (scripts/recovery-time.sh reads it).
			LOG.log(Level.INFO,
					"recovered {0} in {1} ms: manifest and {2} tables opened in {3} ms, {4} records of {5} WAL "
							+ "segments replayed in {6} ms{7}, manifest and folder synced in {8} ms",
					dir, millis(start, done), tableCount, millis(start, tablesOpened), records, wals.size(),
					millis(tablesOpened, walsReplayed),
					frozen.isEmpty() ? "" : " (a frozen memtable until its flush in the background)",
					millis(walsReplayed, done));
			LsmState state = new LsmState(new MemTableSlot(new MemTable(options.memtableSize()), active), frozen,
					levels);
			EngineStats stats = new EngineStats();
			BackupLinker backups = options.incrementalBackups() ? BackupLinker.open(io, dir, stats, levels) : null;
			LsmEngine engine = new LsmEngine(options, io, clock, watermark, state, next, lockChannel, lock, cache,
					stats, backups);
			engine.purgePolicy = purgePolicy;
			if (!frozen.isEmpty()) {
				engine.background.scheduleFlush();
			}
			engine.background.scheduleCompaction();
			engine.background.prepareSpareWal();
			return engine;
		}
		catch (IOException | RuntimeException ex) {
			opened.forEach(SsTable::release);
			cache.close();
			lock.release();
			lockChannel.close();
			throw ex;
		}
	}

	private static long millis(long fromNanos, long toNanos) {
		return (toNanos - fromNanos) / 1_000_000;
	}

}
