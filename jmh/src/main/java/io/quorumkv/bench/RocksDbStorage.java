package io.quorumkv.bench;

import java.nio.ByteBuffer;
import java.nio.file.Path;
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
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteOptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * RocksDB (rocksdbjni) behind the storage SPI: the outside anchor the QuorumKV backends
 * are measured against, configured like the LSM's defaults.
 *
 * <pre>{@code
 * try (RocksDbStorage storage = RocksDbStorage.open(dir)) {
 *     storage.upsert(Entry.value(key, value, ts)).block();
 * }
 * }</pre>
 *
 * <p>
 * Settings and why (see {@code LsmOptions.defaults}): WAL on and no fsync per write
 * ({@code sync=false}), the WAL forced every 100 ms by a background thread (the LSM's
 * {@code FsyncPolicy.INTERVAL}); 64 MiB write buffer, at most two of them; block-based
 * tables with 4 KiB blocks and a 10 bits-per-key bloom filter; no compression (the LSM
 * compresses nothing but key prefixes, which RocksDB's blocks also do); leveled
 * compaction with RocksDB's defaults, which the LSM's defaults copy (level-0 trigger 4,
 * level 1 of 256 MiB, multiplier 10, 64 MiB files, 7 levels).
 *
 * <p>
 * Values are stored as {@code [timestamp: 8 bytes big-endian][flags: 1 byte, 1 =
 * tombstone][value bytes]}. An upsert is a blind {@code put}: unlike the LSM, which
 * compares the new entry with the memtable's by {@code EntryOrder} before inserting, the
 * anchor does no last-write-wins check, so it does less work per write than the SPI
 * demands. That is fine for an anchor and wrong for a real backend.
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

	static final long WRITE_BUFFER_SIZE = 64L << 20;

	static final long BLOCK_SIZE = 4096;

	static final double BLOOM_BITS_PER_KEY = 10;

	static final long WAL_SYNC_INTERVAL_MILLIS = 100;

	private static final int HEADER = Long.BYTES + 1;

	private static final byte TOMBSTONE = 1;

	private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

	private final Options options;

	private final BloomFilter bloom;

	private final WriteOptions writeOptions;

	private final RocksDB db;

	private final ScheduledExecutorService walSyncer;

	private final AtomicBoolean closed = new AtomicBoolean();

	/** Calls and scans using {@link #db}; close waits for zero before freeing it. */
	private final AtomicInteger users = new AtomicInteger();

	private final AtomicReference<@Nullable String> failure = new AtomicReference<>();

	private final LongAdder gets = new LongAdder();

	private final LongAdder upserts = new LongAdder();

	private final LongAdder scans = new LongAdder();

	private RocksDbStorage(Options options, BloomFilter bloom, WriteOptions writeOptions, RocksDB db) {
		this.options = options;
		this.bloom = bloom;
		this.writeOptions = writeOptions;
		this.db = db;
		this.walSyncer = Executors
			.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("rocksdb-wal-sync").factory());
		this.walSyncer.scheduleWithFixedDelay(this::syncWalInBackground, WAL_SYNC_INTERVAL_MILLIS,
				WAL_SYNC_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
	}

	/** Opens (creating when missing) a database in {@code directory}. */
	public static RocksDbStorage open(Path directory) {
		Objects.requireNonNull(directory, "directory");
		BloomFilter bloom = new BloomFilter(BLOOM_BITS_PER_KEY, false);
		Options options = new Options().setCreateIfMissing(true)
			.setWriteBufferSize(WRITE_BUFFER_SIZE)
			.setMaxWriteBufferNumber(2)
			.setCompressionType(CompressionType.NO_COMPRESSION)
			.setBottommostCompressionType(CompressionType.NO_COMPRESSION)
			.setCompactionStyle(CompactionStyle.LEVEL)
			.setTableFormatConfig(new BlockBasedTableConfig().setBlockSize(BLOCK_SIZE).setFilterPolicy(bloom));
		WriteOptions writeOptions = new WriteOptions().setSync(false).setDisableWAL(false);
		try {
			RocksDB db = RocksDB.open(options, directory.toAbsolutePath().toString());
			return new RocksDbStorage(options, bloom, writeOptions, db);
		}
		catch (RocksDBException ex) {
			writeOptions.close();
			options.close();
			bloom.close();
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
				this.db.put(this.writeOptions, entry.key(), encode(entry));
			}
			catch (RocksDBException ex) {
				throw new StorageException("RocksDB put failed", ex);
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
		return new StorageStats("rocksdb",
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
			this.writeOptions.close();
			this.options.close();
			this.bloom.close();
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
