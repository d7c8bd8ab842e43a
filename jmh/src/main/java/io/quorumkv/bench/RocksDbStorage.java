package io.quorumkv.bench;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageClosedException;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.StorageStats;
import org.jspecify.annotations.Nullable;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * RocksDB (rocksdbjni) behind the storage SPI: the outside anchor the QuorumKV backends
 * are measured against, configured as its users would and like the LSM's defaults where
 * the LSM has one ({@link RocksSettings}: WAL forced every 100 ms, 64 MiB write buffer,
 * LRU block cache, bloom filter, 4 KiB blocks, no compression, leveled compaction).
 *
 * <pre>{@code
 * try (RocksDbStorage storage = RocksDbStorage.open(dir, RocksWriter.Mode.COMPARE_VERSIONS)) {
 *     storage.upsert(Entry.value(key, value, ts)).block();
 * }
 * }</pre>
 *
 * <p>
 * Values are stored as {@code [timestamp: 8 bytes big-endian][flags: 1 byte, 1 =
 * tombstone][value bytes]}. Upserts are written by a {@link RocksWriter}: blind
 * ({@code put}, less work than the SPI demands) or comparing versions (read, compare by
 * {@code EntryOrder}, write the winner: last-write-wins as the LSM's upsert has it).
 *
 * <p>
 * Calls run on the caller's thread (RocksDB does not block on I/O it does not have to).
 * {@link #close()} waits for running calls and open scans, then releases every native
 * handle; it never relies on finalizers.
 */
public final class RocksDbStorage implements Storage {

	static {
		RocksDB.loadLibrary();
	}

	private static final int HEADER = Long.BYTES + 1;

	private static final byte TOMBSTONE = 1;

	private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

	private final RocksSettings settings;

	private final RocksDB db;

	private final RocksWriter writer;

	private final ScheduledExecutorService walSyncer;

	private final AtomicBoolean closed = new AtomicBoolean();

	/** Calls and scans using {@link #db}; close waits for zero before freeing it. */
	private final AtomicInteger users = new AtomicInteger();

	private final AtomicReference<@Nullable String> failure = new AtomicReference<>();

	private final LongAdder gets = new LongAdder();

	private final LongAdder upserts = new LongAdder();

	private final LongAdder scans = new LongAdder();

	private RocksDbStorage(RocksSettings settings, RocksDB db, RocksWriter.Mode mode) {
		this.settings = settings;
		this.db = db;
		this.writer = new RocksWriter(db, settings.writeOptions, mode);
		this.walSyncer = Executors
			.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("rocksdb-wal-sync").factory());
		this.walSyncer.scheduleWithFixedDelay(this::syncWalInBackground, RocksSettings.WAL_SYNC_INTERVAL_MILLIS,
				RocksSettings.WAL_SYNC_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
	}

	/**
	 * Opens (creating when missing) a database in {@code directory} whose upserts are
	 * blind writes.
	 */
	public static RocksDbStorage open(Path directory) {
		return open(directory, RocksWriter.Mode.BLIND);
	}

	/** Opens (creating when missing) a database in {@code directory}. */
	public static RocksDbStorage open(Path directory, RocksWriter.Mode mode) {
		Objects.requireNonNull(directory, "directory");
		Objects.requireNonNull(mode, "mode");
		RocksSettings settings = new RocksSettings();
		try {
			RocksDB db = RocksDB.open(settings.options, directory.toAbsolutePath().toString());
			return new RocksDbStorage(settings, db, mode);
		}
		catch (RocksDBException ex) {
			settings.close();
			throw new StorageException("could not open RocksDB in " + directory, ex);
		}
	}

	@Override
	public Mono<Entry> get(byte[] key) {
		Objects.requireNonNull(key, "key");
		return Mono.fromCallable(() -> {
			enter();
			try {
				this.gets.increment();
				byte[] stored = this.db.get(key);
				return (stored != null) ? decode(key, stored) : null;
			}
			finally {
				leave();
			}
		});
	}

	@Override
	public Mono<Void> upsert(Entry entry) {
		Objects.requireNonNull(entry, "entry");
		return Mono.fromRunnable(() -> {
			enter();
			try {
				this.upserts.increment();
				this.writer.write(entry);
			}
			catch (RocksDBException ex) {
				throw new StorageException("RocksDB put failed", ex);
			}
			finally {
				leave();
			}
		});
	}

	/** The list in one {@code WriteBatch} (see {@link RocksWriter#writeAll}). */
	@Override
	public Mono<Void> upsertAll(List<Entry> entries) {
		Objects.requireNonNull(entries, "entries");
		List<Entry> copy = List.copyOf(entries);
		return Mono.fromRunnable(() -> {
			if (copy.isEmpty()) {
				return;
			}
			enter();
			try {
				this.upserts.add(copy.size());
				this.writer.writeAll(copy);
			}
			catch (RocksDBException ex) {
				throw new StorageException("RocksDB batch write failed", ex);
			}
			finally {
				leave();
			}
		});
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
		Objects.requireNonNull(fromInclusive, "fromInclusive");
		byte[] from = fromInclusive.clone();
		byte[] to = (toExclusive != null) ? toExclusive.clone() : null;
		return Flux.using(() -> {
			enter();
			try {
				this.scans.increment();
				return new RocksScanCursor(this.db, from, to, this::leave);
			}
			catch (RuntimeException | Error ex) {
				leave();
				throw ex;
			}
		}, (cursor) -> Flux.<Entry>generate((sink) -> {
			byte[][] next = cursor.next();
			if (next == null) {
				sink.complete();
			}
			else {
				sink.next(decode(next[0], next[1]));
			}
		}), RocksScanCursor::close);
	}

	@Override
	public Mono<Void> flush() {
		return Mono.fromRunnable(() -> {
			enter();
			try {
				this.db.syncWal();
			}
			catch (RocksDBException ex) {
				throw new StorageException("RocksDB WAL sync failed", ex);
			}
			finally {
				leave();
			}
		});
	}

	@Override
	public StorageStats stats() {
		Map<String, Long> gauges = Map.of();
		if (!this.closed.get() && tryEnter()) {
			try {
				gauges = Map.of("keys.estimated", this.db.getLongProperty("rocksdb.estimate-num-keys"));
			}
			catch (RocksDBException ex) {
				// A missing property only loses a gauge.
			}
			finally {
				leave();
			}
		}
		return new StorageStats((this.writer.mode() == RocksWriter.Mode.BLIND) ? "rocksdb" : "rocksdb-lww",
				Map.of("gets", this.gets.sum(), "upserts", this.upserts.sum(), "scans", this.scans.sum()), gauges,
				this.failure.get());
	}

	/**
	 * Stops the WAL syncer, waits (up to 30 s) for running calls and open scans, syncs
	 * the WAL and frees the native handles. Idempotent.
	 */
	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		this.walSyncer.shutdown();
		try {
			this.walSyncer.awaitTermination(10, TimeUnit.SECONDS);
			long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
			while (this.users.get() > 0 && System.nanoTime() < deadline) {
				Thread.sleep(1);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (this.users.get() > 0) {
			// Freeing the database under a live iterator would crash the JVM: leak
			// instead.
			throw new StorageException("RocksDB still in use after 30 s; not closed");
		}
		try {
			this.db.syncWal();
			this.db.closeE();
		}
		catch (RocksDBException ex) {
			throw new StorageException("RocksDB close failed", ex);
		}
		finally {
			this.settings.close();
		}
	}

	private void syncWalInBackground() {
		if (!tryEnter()) {
			return;
		}
		try {
			this.db.syncWal();
		}
		catch (RocksDBException ex) {
			this.failure.compareAndSet(null, "WAL sync failed: " + ex.getMessage());
		}
		finally {
			leave();
		}
	}

	private void enter() {
		if (!tryEnter()) {
			throw new StorageClosedException("rocksdb");
		}
	}

	private boolean tryEnter() {
		this.users.incrementAndGet();
		if (this.closed.get()) {
			leave();
			return false;
		}
		return true;
	}

	private void leave() {
		this.users.decrementAndGet();
	}

	static byte[] encode(Entry entry) {
		byte[] value = entry.value();
		int length = (value != null) ? value.length : 0;
		ByteBuffer out = ByteBuffer.allocate(HEADER + length);
		out.putLong(entry.timestamp());
		out.put((value != null) ? 0 : TOMBSTONE);
		if (value != null) {
			out.put(value);
		}
		return out.array();
	}

	static Entry decode(byte[] key, byte[] stored) {
		if (stored.length < HEADER) {
			throw new StorageException("RocksDB value of " + stored.length + " bytes is shorter than its header");
		}
		ByteBuffer in = ByteBuffer.wrap(stored);
		long timestamp = in.getLong();
		if (in.get() == TOMBSTONE) {
			return Entry.tombstone(key, timestamp);
		}
		byte[] value = new byte[stored.length - HEADER];
		in.get(value);
		return Entry.value(key, value, timestamp);
	}

}
