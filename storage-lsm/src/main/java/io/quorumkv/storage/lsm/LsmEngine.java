package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.UnaryOperator;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Expiry;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.StorageClosedException;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.StorageOverloadedException;
import io.quorumkv.storage.StorageStats;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.memtable.MemTable;
import io.quorumkv.storage.lsm.sstable.BlockCache;
import io.quorumkv.storage.lsm.wal.Syncer;
import io.quorumkv.storage.lsm.wal.WalRecord;
import io.quorumkv.storage.lsm.wal.WalWriter;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The engine: owns the {@link LsmState} reference, the write path and the lifecycle;
 * flushes and compactions run in {@link BackgroundWork}.
 *
 * <p>
 * Locks, always taken in this order (never the other way round): the late-write gate
 * ({@link #lateWrites}: read-held by writes older than the tombstone grace, write-held by
 * a compaction that purged tombstones while it re-checks and publishes), the rotation
 * lock (read-held by every upsert around its WAL append and memtable insert, write-held
 * while the active memtable is swapped and while close writes it out, so a record always
 * lands in the memtable of its WAL segment), the manifest lock (held by whoever changes
 * the set of tables: it writes the manifest, then publishes; see {@link ManifestEditor}),
 * and the state lock (held only to replace the state reference; no I/O under it).
 */
final class LsmEngine {

	static final String BACKEND = "lsm";

	/** Writers stall while level 0 holds this many times its compaction trigger. */
	static final int LEVEL0_STOP_FACTOR = 2;

	private static final System.Logger LOG = System.getLogger(LsmEngine.class.getName());

	final LsmOptions options;

	/** Every file operation on the data folder goes through it. */
	final FileIo io;

	final Path dir;

	/** The clock expiry and the tombstone grace are judged by. */
	private final Clock clock;

	/** The manifest's expiry watermark at open: no earlier instant is judged by. */
	private final long clockFloor;

	final EngineStats stats;

	/**
	 * Links flushed tables into {@code backups/}; null unless incremental backups are on.
	 */
	final @Nullable BackupLinker backups;

	/** Decompressed data blocks of this engine's tables, off the heap; closed last. */
	final BlockCache blockCache;

	/**
	 * What a compaction must also ask before it purges a tombstone ({@code Storage}'s
	 * purge policy); by default only the grace period and the older-version probe decide.
	 */
	volatile PurgePolicy purgePolicy = PurgePolicy.ANY;

	final AtomicReference<LsmState> state;

	final AtomicLong nextFileNumber;

	final ReentrantLock manifestLock = new ReentrantLock();

	private final ReentrantLock stateLock = new ReentrantLock();

	/** Held while a WAL segment is numbered, created and linked ({@link #newSegment}). */
	private final Object segmentLock = new Object();

	private final ReentrantReadWriteLock rotationLock = new ReentrantReadWriteLock();

	/**
	 * The late-write gate: a write with an entry older than the tombstone grace holds the
	 * read side around its WAL append and memtable insert; a compaction that purged
	 * tombstones holds the write side while it checks them again against the memtables
	 * and tables of now and publishes. So a late write either lands before that check
	 * (which then keeps the tombstones it is shadowed by) or after the publication (a
	 * write arriving after the purge, which the grace period's contract lets resurrect
	 * the key). Writes within the grace never touch it.
	 */
	final ReentrantReadWriteLock lateWrites = new ReentrantReadWriteLock();

	private final long graceMicros;

	private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();

	private final AtomicBoolean closed = new AtomicBoolean();

	private final AtomicBoolean rotating = new AtomicBoolean();

	private volatile CompletableFuture<Void> flushed = new CompletableFuture<>();

	private final FileChannel lockChannel;

	private final FileLock lock;

	final ReadPath reads;

	final BackgroundWork background;

	/** The snapshots' holds of the versions flushes and compactions would drop. */
	final VersionHolds holds;

	private final Syncer syncer;

	LsmEngine(LsmOptions options, FileIo io, Clock clock, long clockFloor, LsmState initial, long nextFileNumber,
			FileChannel lockChannel, FileLock lock, BlockCache blockCache, EngineStats stats,
			@Nullable BackupLinker backups) {
		this.options = options;
		this.stats = stats;
		this.backups = backups;
		this.blockCache = blockCache;
		this.io = io;
		this.clock = clock;
		this.clockFloor = clockFloor;
		this.graceMicros = CompactionRunner.saturatedMicros(options.tombstoneGracePeriod());
		this.dir = options.directory();
		this.state = new AtomicReference<>(initial);
		this.nextFileNumber = new AtomicLong(nextFileNumber);
		this.lockChannel = lockChannel;
		this.lock = lock;
		this.reads = new ReadPath(this.state, this.stats, this::checkOpen, this::nowMicros);
		this.background = new BackgroundWork(this);
		this.holds = new VersionHolds(io, this.background::scheduleCompaction);
		Duration period = (options.fsync() == FsyncPolicy.INTERVAL) ? options.fsyncInterval() : null;
		// The periodic sync stops at a failure, as everything durable does.
		this.syncer = new Syncer("lsm-wal-syncer-" + this.dir.getFileName(),
				() -> (this.failure.get() != null) ? List.of() : liveWals(), period, this::fail);
	}

	// ---- write path

	Mono<Void> upsert(Entry entry) {
		return Mono.defer(() -> write(List.of(entry), System.nanoTime()));
	}

	/** Upserts {@code entries} with one WAL write (see {@link WalWriter#appendAll}). */
	Mono<Void> upsertAll(List<Entry> entries) {
		return Mono.defer(() -> entries.isEmpty() ? Mono.empty() : write(entries, System.nanoTime()));
	}

	private Mono<Void> write(List<Entry> entries, long firstAttempt) {
		checkWritable();
		if (mustStall(this.state.get())) {
			CompletableFuture<Void> signal = this.flushed;
			long left = this.options.maxStall().toNanos() - (System.nanoTime() - firstAttempt);
			if (left <= 0) {
				return Mono.error(new StorageOverloadedException("LSM writes stalled for " + this.options.maxStall()
						+ ": flushes or level-0 compaction are behind"));
			}
			if (mustStall(this.state.get())) {
				long waitStart = System.nanoTime();
				return Mono.fromFuture(signal, true)
					.timeout(Duration.ofNanos(left), Mono.empty())
					.onErrorResume((ex) -> Mono.empty())
					.then(Mono.defer(() -> {
						this.stats.stallNanos.add(System.nanoTime() - waitStart);
						return write(entries, firstAttempt);
					}));
			}
		}
		WalWriter wal;
		long memtableBytes;
		// A write older than the tombstone grace (rare: a hint or repair of an old
		// version) holds the late-write gate out of a purging compaction's publication.
		Lock gate = isLate(entries) ? this.lateWrites.readLock() : null;
		if (gate != null) {
			gate.lock();
		}
		this.rotationLock.readLock().lock();
		try {
			checkWritable();
			MemTableSlot slot = this.state.get().active();
			wal = slot.wal();
			wal.appendAll(entries);
			MemTable memtable = slot.memtable();
			for (Entry entry : entries) {
				memtable.put(entry);
			}
			memtableBytes = memtable.sizeInBytes();
		}
		catch (IOException ex) {
			fail(ex);
			return Mono.error(failedException());
		}
		finally {
			this.rotationLock.readLock().unlock();
			if (gate != null) {
				gate.unlock();
			}
		}
		long walBytes = 0;
		for (Entry entry : entries) {
			walBytes += WalRecord.encodedSize(entry);
		}
		this.stats.upserts.add(entries.size());
		this.stats.walBytes.add(walBytes);
		if (memtableBytes >= this.options.memtableSize()) {
			rotate(false);
		}
		if (this.options.fsync() == FsyncPolicy.ALWAYS) {
			return synced(this.syncer.request(List.of(wal)));
		}
		this.syncer.written();
		return Mono.empty();
	}

	/**
	 * The instant expiry and the tombstone grace are judged at, in microseconds: the
	 * clock's, but never before the instant the last manifest recorded (a clock set back
	 * across a restart brings no expired entry back).
	 */
	long nowMicros() {
		return Math.max(Expiry.nowMicros(this.clock), this.clockFloor);
	}

	/** Whether an entry is older than the tombstone grace (a purge may shadow it). */
	private boolean isLate(List<Entry> entries) {
		long now = nowMicros();
		long before = (now - this.graceMicros > now) ? Long.MIN_VALUE : now - this.graceMicros;
		for (Entry entry : entries) {
			if (entry.timestamp() < before) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Writers wait while too many frozen memtables wait for their flush, or while level 0
	 * holds {@link #LEVEL0_STOP_FACTOR} times its compaction trigger (compaction is
	 * behind and every lookup would pay for it).
	 */
	private boolean mustStall(LsmState s) {
		// Not for level 0 while a snapshot holds compactions back: they would not catch
		// up before it ends.
		return s.immutables().size() >= this.options.maxImmutableMemtables()
				|| (s.levels().level(0).size() >= LEVEL0_STOP_FACTOR * this.options.level0CompactionTrigger()
						&& !this.holds.held());
	}

	/**
	 * Freezes the active memtable (when full, or when {@code force} and not empty) and
	 * queues its flush. The next WAL segment is normally created ahead of time by the
	 * flush thread; only when none is ready is it opened here, before the swap and
	 * outside the locks.
	 * @return whether a memtable was frozen
	 */
	boolean rotate(boolean force) {
		if (this.failure.get() != null || !this.rotating.compareAndSet(false, true)) {
			// Failed: no new segment, no flush until a restart.
			return false;
		}
		try {
			MemTableSlot current = this.state.get().active();
			long size = current.memtable().sizeInBytes();
			if ((force) ? current.memtable().isEmpty() : size < this.options.memtableSize()) {
				return false;
			}
			WalWriter wal = this.background.takeSpareWal();
			if (wal != null && wal.number() < current.wal().number()) {
				// Numbered by the flush thread just before a rotation that found no spare
				// numbered a segment of its own. The segments must follow the memtables'
				// order: recovery deletes every segment below the oldest unflushed
				// memtable's, and this one would hold the newest writes.
				this.background.discard(wal);
				wal = null;
			}
			if (wal == null) {
				wal = newSegment();
			}
			MemTableSlot next = new MemTableSlot(new MemTable(this.options.memtableSize()), wal);
			this.rotationLock.writeLock().lock();
			try {
				// Taken once no write is inside the memtable: every write before it is
				// in.
				long frozenAt = nowMicros();
				update((s) -> s.withActive(next, frozenAt));
			}
			finally {
				this.rotationLock.writeLock().unlock();
			}
			this.background.scheduleFlush();
			this.background.prepareSpareWal();
			return true;
		}
		catch (IOException | RuntimeException ex) {
			fail(ex);
			return false;
		}
		finally {
			this.rotating.set(false);
		}
	}

	/**
	 * Numbers and creates a new, empty WAL segment and, with incremental backups on,
	 * links it into {@code backups/wal/} before it takes a write ({@link WalLinker}). One
	 * at a time, so that segments are linked in the order of their numbers and each
	 * record names the segment created before it. Normally called on the flush thread for
	 * the next memtable; a rotation that finds no segment made ahead calls it on the
	 * writer's thread, which then waits for the link's forces too. Without incremental
	 * backups, segments are created without the lock, as before there were links.
	 */
	WalWriter newSegment() throws IOException {
		if (this.backups == null) {
			// Nothing to link: segments may be created side by side (a rotation need not
			// wait for a spare segment's creation held up on the flush thread).
			long number = this.nextFileNumber.getAndIncrement();
			return WalWriter.create(this.io, DataFiles.wal(this.dir, number), number);
		}
		synchronized (this.segmentLock) {
			long number = this.nextFileNumber.getAndIncrement();
			WalWriter wal = WalWriter.create(this.io, DataFiles.wal(this.dir, number), number);
			this.backups.segments().link(wal.path(), number);
			return wal;
		}
	}

	/** Replaces the state; the only writer of the reference. */
	void update(UnaryOperator<LsmState> edit) {
		this.stateLock.lock();
		try {
			this.state.set(edit.apply(this.state.get()));
		}
		finally {
			this.stateLock.unlock();
		}
	}

	/** Wakes stalled writers: a flush or a compaction finished. */
	void signalFlushed() {
		CompletableFuture<Void> previous = this.flushed;
		this.flushed = new CompletableFuture<>();
		previous.complete(null);
	}

	/**
	 * Forces every live WAL segment. Fails once the engine failed, also when the failure
	 * came while the force ran: a force after a failed one proves nothing.
	 */
	Mono<Void> flush() {
		return Mono.defer(() -> {
			checkWritable();
			return synced(this.syncer.request(liveWals()));
		});
	}

	/**
	 * Completes when a force requested from the syncer did and the engine has not failed
	 * meanwhile; a failure (an {@code IOException} from {@code fsync}, which the syncer
	 * has made the engine's) becomes the engine's {@link LsmFailedException}.
	 */
	private Mono<Void> synced(CompletableFuture<Void> force) {
		return Mono.fromFuture(force, true)
			.then(Mono.<Void>fromRunnable(this::checkNotFailed))
			.onErrorMap((ex) -> !(ex instanceof StorageException), (ex) -> (this.failure.get() != null)
					? failedException() : new StorageException("WAL fsync failed: " + ex, ex));
	}

	/**
	 * The WAL segments whose writes are not all in tables yet: the active memtable's and
	 * the frozen ones'.
	 */
	private List<WalWriter> liveWals() {
		return this.state.get().memtables().stream().map(MemTableSlot::wal).toList();
	}

	// ---- failures and lifecycle

	/**
	 * Keeps the first failure of durable I/O (a write or force of the WAL, a table or the
	 * manifest) or of background work. It is final until a restart (STYLE rules 9 and
	 * 19): writes, {@code flush()}, forced flushes and compactions fail with it
	 * ({@link LsmFailedException}), no flush, compaction or force runs any more (close
	 * included), reads go on, and health shows it.
	 */
	void fail(Throwable ex) {
		if (this.failure.compareAndSet(null, ex)) {
			LOG.log(Level.ERROR, "LSM storage in " + this.dir + " failed; writes are refused from now on", ex);
			signalFlushed();
		}
	}

	@Nullable Throwable failure() {
		return this.failure.get();
	}

	boolean isClosed() {
		return this.closed.get();
	}

	void checkOpen() {
		if (this.closed.get()) {
			throw new StorageClosedException(BACKEND);
		}
	}

	/** Throws if closed, or with the engine's sticky failure. */
	void checkWritable() {
		checkOpen();
		checkNotFailed();
	}

	private void checkNotFailed() {
		if (this.failure.get() != null) {
			throw failedException();
		}
	}

	/** The exception writes and flushes fail with once the engine failed. */
	LsmFailedException failedException() {
		Throwable ex = this.failure.get();
		return new LsmFailedException(this.dir, (ex != null) ? ex : new IllegalStateException("not failed"));
	}

	StorageStats stats() {
		return this.stats.snapshot(this.state.get(), this.background.planner(), this.blockCache, this.failure.get());
	}

	/**
	 * Stops background work, writes the active memtable to a table, unmaps every table
	 * and releases the folder lock. Idempotent. After a failure it writes and forces
	 * nothing: what was durable at the failure is what the restart recovers.
	 */
	void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		this.background.stop();
		this.rotationLock.writeLock().lock();
		try {
			if (this.failure.get() == null) {
				this.background.flushActiveOnClose();
			}
		}
		catch (IOException | RuntimeException ex) {
			fail(ex);
		}
		finally {
			this.rotationLock.writeLock().unlock();
		}
		LsmState last = this.state.get();
		boolean failed = this.failure.get() != null;
		for (MemTableSlot slot : last.memtables()) {
			try (WalWriter wal = slot.wal()) {
				if (!failed) {
					wal.sync();
				}
			}
			catch (IOException ex) {
				LOG.log(Level.ERROR, "could not force WAL segment " + slot.wal().path() + " on close", ex);
			}
		}
		this.syncer.close();
		this.holds.closeAll();
		last.levels().all().forEach((t) -> t.release());
		this.blockCache.close();
		this.flushed.complete(null);
		try {
			this.lock.release();
			this.lockChannel.close();
		}
		catch (IOException ex) {
			LOG.log(Level.WARNING, "could not release the lock of " + this.dir, ex);
		}
	}

}
