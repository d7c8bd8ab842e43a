package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.lsm.manifest.Manifest;
import io.quorumkv.storage.lsm.sstable.SsTable;
import io.quorumkv.storage.lsm.sstable.TableDigest;

/**
 * An online snapshot of the engine's files: the memtables are frozen and flushed, then,
 * under the manifest lock (no table is added or dropped meanwhile), every live table
 * (with its {@link TableDigest}, where it has one) and the manifest naming exactly them
 * are hard-linked into the target folder, which is forced. Tables are immutable and the
 * manifest is replaced by rename, never rewritten, so a link is a copy that costs no I/O
 * and never changes; a compaction that drops a table later deletes only its name in the
 * data folder.
 *
 * <p>
 * The snapshot holds every write that completed before it was asked: the memtable active
 * then is frozen and flushed before the links are made. The folder it makes is itself a
 * data folder of the LSM (its manifest names its tables, no WAL segment is needed), so a
 * node can be restored in place by putting it back as its {@code data} folder.
 */
final class LsmSnapshot {

	/** The folder of a snapshot's WAL segment links ({@link #linkSegments}). */
	static final String WAL_FOLDER = "wal";

	/** Rotations tried in a row before a snapshot waits for another thread's to end. */
	private static final int SPINS = 1_000;

	/** How long a snapshot waits for other threads' rotations before it gives up. */
	private static final long FREEZE_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(30);

	/** The pause between tries while another thread rotates. */
	private static final Executor RETRY = CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS);

	/**
	 * Waits for a flush of the memtable a snapshot froze (the queue may grow meanwhile).
	 */
	private static final int MAX_ROTATIONS = 1_000;

	private LsmSnapshot() {
	}

	/**
	 * Freezes the active memtable (again while a concurrent rotation keeps this one from
	 * freezing it) and completes once it and every older one are in tables.
	 */
	static CompletableFuture<Void> flushed(LsmEngine engine) {
		engine.checkWritable();
		MemTableSlot start = engine.state.get().active();
		// Not forceFlush: it would freeze the memtable the writes since went to as well,
		// and two memtables waiting for their flush stall the writers.
		return frozen(engine, start, System.nanoTime() + FREEZE_LIMIT_NANOS)
			.thenCompose((frozen) -> untilFlushed(engine, start, 0));
	}

	/**
	 * Completes once {@code start} is frozen (by this rotation or another thread's) or
	 * empty. Another thread's rotation may take a while (its new WAL segment is created,
	 * and with incremental backups linked and forced, on that thread): this tries again
	 * every millisecond, without holding the caller's thread, until the limit.
	 */
	private static CompletableFuture<Void> frozen(LsmEngine engine, MemTableSlot start, long deadline) {
		for (int i = 0; i < SPINS && engine.state.get().active() == start; i++) {
			if (start.memtable().isEmpty() || engine.rotate(true)) {
				break;
			}
			Throwable failure = engine.failure();
			if (failure != null) {
				return CompletableFuture.failedFuture(failure);
			}
			Thread.onSpinWait();
		}
		if (engine.state.get().active() != start || start.memtable().isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		if (System.nanoTime() - deadline >= 0) {
			return CompletableFuture.failedFuture(new StorageException(
					"could not freeze the memtable of " + engine.dir + " for a snapshot: another rotation held it for "
							+ TimeUnit.NANOSECONDS.toSeconds(FREEZE_LIMIT_NANOS) + " s"));
		}
		// Another thread is rotating (the memtable filled up): its swap freezes ours.
		return CompletableFuture.runAsync(() -> {
		}, RETRY).thenCompose((retry) -> frozen(engine, start, deadline));
	}

	/**
	 * Completes once {@code slot} is no longer waiting for its flush (flushes run oldest
	 * first, so neither is any older one). A rotation by another thread may queue its
	 * flush after this wait: then it waits again.
	 */
	private static CompletableFuture<Void> untilFlushed(LsmEngine engine, MemTableSlot slot, int waits) {
		return engine.background.queuedFlushes().thenCompose((done) -> {
			if (!engine.state.get().immutables().contains(slot)) {
				return CompletableFuture.completedFuture(null);
			}
			if (waits >= MAX_ROTATIONS) {
				return CompletableFuture.failedFuture(new StorageException(
						"the memtable of " + engine.dir + " frozen for a snapshot was not flushed"));
			}
			return untilFlushed(engine, slot, waits + 1);
		});
	}

	/**
	 * Hard-links into {@code target/wal/} the WAL segments of the active memtable, of
	 * every memtable still waiting for its flush and of those flushed while a hold was
	 * open ({@link VersionHolds}), before the snapshot freezes the active one. They hold
	 * every version written to those memtables, in order, where a flushed table holds the
	 * newest of each key only: a key written before the snapshot's time and overwritten
	 * after it, but before this node froze its memtable, is in a segment with both
	 * versions, and a restore as of that time takes the older from it. The active
	 * segment's link takes the writes until the freeze (the same file). Without a hold
	 * opened before the snapshot's time, a memtable flushed between that time and this
	 * call has lost its segment.
	 * @return the links' names, relative to {@code target}
	 */
	static List<String> linkSegments(LsmEngine engine, Path target) throws IOException {
		engine.checkOpen();
		Path folder = target.resolve(WAL_FOLDER);
		engine.io.createDirectories(folder);
		// Oldest first.
		List<Path> segments = new ArrayList<>(engine.holds.retained());
		LsmState state = engine.state.get();
		state.immutables().reversed().forEach((slot) -> segments.addAll(slot.segments()));
		segments.addAll(state.active().segments());
		List<String> names = new ArrayList<>();
		for (Path segment : segments) {
			// Each memtable's segments are its own: no name comes twice.
			String name = segment.getFileName().toString();
			try {
				engine.io.link(segment, folder.resolve(name));
				names.add(WAL_FOLDER + "/" + name);
			}
			catch (NoSuchFileException ex) {
				// Flushed and deleted since the state was read (no hold was open): its
				// newest versions are in a table, an overwritten one is lost to the
				// snapshot.
			}
		}
		engine.io.syncDirectory(folder);
		return names;
	}

	/**
	 * Hard-links the live tables and the manifest into {@code target} and forces it.
	 * @return the names of the files linked
	 */
	static List<String> link(LsmEngine engine, Path target) throws IOException {
		engine.checkOpen();
		List<String> names = new ArrayList<>();
		engine.manifestLock.lock();
		try {
			Manifest manifest = Manifest.read(engine.io, engine.dir);
			if (manifest == null) {
				throw new StorageException("no manifest in " + engine.dir);
			}
			LsmState state = engine.state.get();
			List<Long> live = state.levels().all().stream().map(SsTable::number).sorted().toList();
			List<Long> named = manifest.tables().stream().map(Manifest.TableRef::number).sorted().toList();
			if (!live.equals(named)) {
				throw new StorageException(
						"the manifest of " + engine.dir + " names tables " + named + " but the engine serves " + live);
			}
			for (SsTable table : state.levels().all()) {
				String name = table.path().getFileName().toString();
				engine.io.link(table.path(), target.resolve(name));
				names.add(name);
				// Its digest too, where it has one (not a table written before them):
				// the snapshot's manifest takes the table's checksum from it. A table the
				// engine serves keeps its digest: both go only once it is obsolete.
				Path digest = TableDigest.of(table.path());
				try {
					engine.io.link(digest, target.resolve(digest.getFileName()));
					names.add(digest.getFileName().toString());
				}
				catch (NoSuchFileException ex) {
					// A table written before digests.
				}
			}
			engine.io.link(engine.dir.resolve(Manifest.FILE_NAME), target.resolve(Manifest.FILE_NAME));
			names.add(Manifest.FILE_NAME);
			if (engine.backups != null) {
				// Under the manifest lock no flush publishes: every table flushed up to
				// this one is in the snapshot, and the next flush names it as previous.
				IncrementalBackup.writeBase(target, engine.backups.lastFlushed());
				names.add(IncrementalBackup.BASE_FILE);
			}
		}
		finally {
			engine.manifestLock.unlock();
		}
		engine.io.syncDirectory(target);
		return names;
	}

}
