package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Throttle;
import io.quorumkv.storage.lsm.compaction.CompactionTask;
import io.quorumkv.storage.lsm.compaction.Compactor;
import io.quorumkv.storage.lsm.compaction.LeveledPlanner;
import io.quorumkv.storage.lsm.memtable.MemTable;
import io.quorumkv.storage.lsm.sstable.SsTable;
import io.quorumkv.storage.lsm.sstable.SsTableBuilder;
import io.quorumkv.storage.lsm.wal.WalWriter;
import org.jspecify.annotations.Nullable;

/**
 * Memtable flushes (one thread, oldest frozen memtable first) and compactions (another
 * thread, so that a long compaction never holds up flushes). Every change of the table
 * set writes the manifest first and publishes the new state after, both under the
 * manifest lock; files a published state no longer names are deleted only afterwards. Any
 * failure is handed to {@link LsmEngine#fail} and stays: from then on no flush,
 * compaction or new WAL segment starts, and forced ones fail with it, until a restart.
 */
final class BackgroundWork {

	private final LsmEngine engine;

	private final ExecutorService flushExecutor = Executors
		.newSingleThreadExecutor(Thread.ofPlatform().name("lsm-flush").daemon().factory());

	private final ExecutorService compactionExecutor;

	private final LeveledPlanner planner;

	private final CompactionRunner compactions;

	private final ManifestEditor manifest;

	private final AtomicBoolean compactionQueued = new AtomicBoolean();

	private final AtomicReference<@Nullable WalWriter> spareWal = new AtomicReference<>();

	private volatile boolean stopping;

	BackgroundWork(LsmEngine engine) {
		this.engine = engine;
		LsmOptions o = engine.options;
		this.compactionExecutor = Executors.newSingleThreadExecutor(
				CpuPriority.lowered(Thread.ofPlatform().name("lsm-compaction").daemon().factory(), o.compactionNice()));
		this.planner = new LeveledPlanner(o.maxLevels(), o.level0CompactionTrigger(), o::levelTargetSize);
		this.manifest = new ManifestEditor(engine);
		this.compactions = new CompactionRunner(engine, this.manifest,
				new Compactor(engine.io, o.blockSize(), o.bloomBitsPerKey(), o.compression().codec(),
						o.targetTableSize(), (n) -> DataFiles.table(engine.dir, n), engine.blockCache),
				() -> this.stopping);
	}

	LeveledPlanner planner() {
		return this.planner;
	}

	void scheduleFlush() {
		try {
			this.flushExecutor.execute(this::flushOldest);
		}
		catch (RejectedExecutionException ex) {
			// Closing: close() flushes what is left.
		}
	}

	/** The WAL segment created ahead for the next memtable, if one is ready. */
	@Nullable WalWriter takeSpareWal() {
		return this.spareWal.getAndSet(null);
	}

	/**
	 * Creates the next memtable's WAL segment on the flush thread, so that a writer that
	 * fills the memtable does not open a file.
	 */
	void prepareSpareWal() {
		try {
			this.flushExecutor.execute(() -> {
				if (this.stopping || this.spareWal.get() != null || this.engine.failure() != null) {
					return;
				}
				try {
					offerSpareWal(this.engine.newSegment());
				}
				catch (IOException ex) {
					this.engine.fail(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// Closing.
		}
	}

	/**
	 * Keeps {@code wal} as the next memtable's segment unless one is kept already. A
	 * rotation may have numbered a segment of its own meanwhile, so the spare's number
	 * can be below the active segment's: {@link LsmEngine#rotate} does not use it then.
	 */
	void offerSpareWal(WalWriter wal) throws IOException {
		if (!this.spareWal.compareAndSet(null, wal)) {
			discard(wal);
		}
	}

	/** Closes and deletes a segment that holds no write. */
	void discard(WalWriter wal) throws IOException {
		wal.close();
		this.engine.io.deleteIfExists(wal.path());
	}

	void scheduleCompaction() {
		if (this.compactionQueued.compareAndSet(false, true)) {
			try {
				this.compactionExecutor.execute(() -> {
					this.compactionQueued.set(false);
					compactWhileNeeded();
				});
			}
			catch (RejectedExecutionException ex) {
				this.compactionQueued.set(false);
			}
		}
	}

	/**
	 * Freezes the active memtable and completes once every frozen memtable is flushed;
	 * fails with the engine's failure once it failed (a flush that failed, or any earlier
	 * failure: nothing more is flushed until a restart).
	 */
	CompletableFuture<Void> forceFlush() {
		if (this.engine.failure() != null) {
			return CompletableFuture.failedFuture(this.engine.failedException());
		}
		this.engine.rotate(true);
		return queuedFlushes();
	}

	/**
	 * Completes once the flushes queued so far have run (they run in order on the flush
	 * thread); freezes nothing.
	 */
	CompletableFuture<Void> queuedFlushes() {
		if (this.engine.failure() != null) {
			return CompletableFuture.failedFuture(this.engine.failedException());
		}
		return CompletableFuture.runAsync(this.engine::checkWritable, this.flushExecutor);
	}

	/** Test hook: runs {@code task} on the compaction thread (e.g. to hold it up). */
	void onCompactionThread(Runnable task) {
		this.compactionExecutor.execute(task);
	}

	/**
	 * Compacts every table into the deepest level, leaving out every entry whose key
	 * {@code drop} accepts, at the throttle's rate of entries merged; completes with how
	 * many were left out.
	 */
	CompletableFuture<Long> forceFullCompaction(java.util.function.Predicate<byte[]> drop, Throttle throttle) {
		return CompletableFuture.supplyAsync(() -> {
			this.engine.checkWritable();
			try {
				Optional<CompactionTask> task = this.planner.planFull(this.engine.state.get().levels());
				return task.isPresent() ? this.compactions.run(task.get(), true, drop, throttle) : 0L;
			}
			catch (IOException ex) {
				this.engine.fail(ex);
				throw this.engine.failedException();
			}
		}, this.compactionExecutor);
	}

	/** Compacts every table into the deepest level, purging what may be purged. */
	CompletableFuture<Void> forceFullCompaction() {
		return CompletableFuture.runAsync(() -> {
			this.engine.checkWritable();
			try {
				Optional<CompactionTask> task = this.planner.planFull(this.engine.state.get().levels());
				if (task.isPresent()) {
					this.compactions.run(task.get(), true, null, Throttle.NONE);
				}
			}
			catch (IOException ex) {
				this.engine.fail(ex);
				throw this.engine.failedException();
			}
		}, this.compactionExecutor);
	}

	private void flushOldest() {
		try {
			LsmState s = this.engine.state.get();
			if (s.immutables().isEmpty() || this.engine.failure() != null) {
				// Failed: nothing more is made durable until a restart.
				return;
			}
			MemTableSlot slot = s.immutables().getLast();
			SsTable table = slot.memtable().isEmpty() ? null : writeTable(slot.memtable());
			BackupLinker backups = this.engine.backups;
			BackupLinker.Pending linked = null;
			this.engine.manifestLock.lock();
			try {
				this.manifest.publish((st) -> st.withoutImmutable(slot)
					.withLevels((table != null) ? st.levels().withFlushed(table) : st.levels()));
				if (table != null && backups != null) {
					// Durable and in the manifest, so a linked file is always whole;
					// linked
					// before a compaction may drop it.
					linked = backups.claim(table, slot.frozenAt());
				}
			}
			finally {
				this.engine.manifestLock.unlock();
			}
			slot.wal().close();
			// Kept while a snapshot holds the versions the memtable overwrote.
			this.engine.holds.retire(slot.segments());
			this.engine.stats.flushes.increment();
			this.engine.stats.flushBytes.add((table != null) ? table.fileSize() : 0);
			this.engine.signalFlushed();
			scheduleCompaction();
			if (backups != null) {
				// After stalled writers are woken: only the next flush waits for the
				// record.
				backups.finish(linked);
			}
		}
		catch (IOException | RuntimeException ex) {
			this.engine.fail(ex);
		}
	}

	private SsTable writeTable(MemTable memtable) throws IOException {
		long number = this.engine.nextFileNumber.getAndIncrement();
		LsmOptions o = this.engine.options;
		try (SsTableBuilder builder = SsTableBuilder.create(this.engine.io, DataFiles.table(this.engine.dir, number),
				number, o.blockSize(), o.bloomBitsPerKey(), o.compression().codec())) {
			for (Iterator<Entry> it = memtable.iterator(); it.hasNext();) {
				builder.add(it.next());
			}
			return builder.finishAndOpen(this.engine.blockCache);
		}
	}

	private void compactWhileNeeded() {
		try {
			while (!this.stopping && this.engine.failure() == null) {
				Optional<CompactionTask> task = this.planner.plan(this.engine.state.get().levels());
				if (task.isEmpty()) {
					return;
				}
				this.compactions.run(task.get());
			}
		}
		catch (CancellationException ex) {
			// Closing.
		}
		catch (IOException | RuntimeException ex) {
			this.engine.fail(ex);
		}
	}

	/**
	 * Cancels a running compaction, lets queued flushes finish and deletes the spare WAL
	 * segment.
	 */
	void stop() {
		this.stopping = true;
		this.compactionExecutor.shutdown();
		this.flushExecutor.shutdown();
		try {
			this.compactionExecutor.awaitTermination(60, TimeUnit.SECONDS);
			this.flushExecutor.awaitTermination(60, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		WalWriter spare = this.spareWal.getAndSet(null);
		if (spare != null) {
			try {
				discard(spare);
			}
			catch (IOException ex) {
				// An empty segment left behind is replayed as empty and deleted on open.
			}
		}
	}

	/**
	 * On close (background stopped, writers locked out): writes the active and any still
	 * frozen memtable to tables and retires every WAL segment.
	 */
	void flushActiveOnClose() throws IOException {
		LsmState s = this.engine.state.get();
		List<SsTable> written = new ArrayList<>();
		List<Long> frozenAt = new ArrayList<>();
		long now = this.engine.nowMicros();
		for (MemTableSlot slot : s.memtables().reversed()) {
			if (!slot.memtable().isEmpty()) {
				written.add(writeTable(slot.memtable()));
				frozenAt.add((slot.frozenAt() == MemTableSlot.ACTIVE) ? now : slot.frozenAt());
			}
		}
		long retireBelow = this.engine.nextFileNumber.getAndIncrement();
		this.engine.manifestLock.lock();
		try {
			UnaryOperator<LsmState> edit = (st) -> {
				LsmState next = st;
				for (SsTable t : written) {
					next = next.withLevels(next.levels().withFlushed(t));
				}
				return next;
			};
			this.manifest.manifestOf(edit.apply(this.engine.state.get()), retireBelow)
				.write(this.engine.io, this.engine.dir);
			this.engine.update(edit);
		}
		finally {
			this.engine.manifestLock.unlock();
		}
		if (this.engine.backups != null) {
			for (int i = 0; i < written.size(); i++) {
				this.engine.backups.linkFlushed(written.get(i), frozenAt.get(i));
			}
		}
		for (MemTableSlot slot : s.memtables()) {
			slot.wal().close();
			for (Path segment : slot.segments()) {
				this.engine.io.deleteIfExists(segment);
			}
		}
	}

}
