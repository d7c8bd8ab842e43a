package io.quorumkv.service.storage;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

import io.quorumkv.storage.derby.DerbyStorageOptions;
import io.quorumkv.storage.h2.H2Durability;
import io.quorumkv.storage.h2.H2StorageOptions;
import io.quorumkv.storage.lsm.Compression;
import io.quorumkv.storage.lsm.FsyncPolicy;
import io.quorumkv.storage.lsm.LsmOptions;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The {@code quorumkv.storage.*} settings: the backend, the node's data folder and each
 * backend's options, validated when bound (a bad value stops the start with a message
 * naming the property).
 *
 * @param backend the storage engine: {@code lsm}, {@code h2} or {@code derby}
 * @param path the node's data folder (created when missing): data under {@code data/},
 * hints under {@code hints/}
 * @param lsm settings of the {@code lsm} backend
 * @param h2 settings of the {@code h2} backend
 * @param derby settings of the {@code derby} backend
 * @param tombstoneGracePeriod a tombstone is purged only once older than this and after a
 * repair of its range that started after it was written (every backend); longer than a
 * replica may stay down and than the repair interval
 * @param purgeInterval how often the backend is asked to drop the tombstones it may (H2
 * and Derby; the LSM drops them in its compactions)
 */
@ConfigurationProperties("quorumkv.storage")
public record StorageProperties(@DefaultValue("lsm") Backend backend, @DefaultValue("./data/node") Path path,
		@DefaultValue LsmProperties lsm, @DefaultValue H2Properties h2, @DefaultValue DerbyProperties derby,
		@DefaultValue("10d") Duration tombstoneGracePeriod, @DefaultValue("1h") Duration purgeInterval) {

	public StorageProperties {
		Objects.requireNonNull(backend, "quorumkv.storage.backend");
		Objects.requireNonNull(path, "quorumkv.storage.path");
		if (tombstoneGracePeriod.isNegative()) {
			throw new IllegalArgumentException("quorumkv.storage.tombstone-grace-period must not be negative");
		}
		if (purgeInterval.isNegative() || purgeInterval.isZero()) {
			throw new IllegalArgumentException("quorumkv.storage.purge-interval must be positive");
		}
		if (backend != Backend.LSM && lsm.incrementalBackups()) {
			throw new IllegalArgumentException("quorumkv.storage.lsm.incremental-backups is for the lsm backend: the "
					+ backend.name().toLowerCase(Locale.ROOT) + " backend keeps no tables to link; "
					+ "take snapshots instead (docs/backup.md)");
		}
	}

	/**
	 * The LSM backend (see docs/storage-lsm.md); defaults equal
	 * {@code LsmOptions.defaults}.
	 *
	 * @param memtableSize bytes a memtable holds before it is flushed to an SSTable
	 * @param blockSize target size of an SSTable data block
	 * @param bloomBitsPerKey bloom filter bits per key (10: about 1% false positives)
	 * @param fsync when the write-ahead log is forced to disk: {@code always},
	 * {@code interval} or {@code never}
	 * @param fsyncInterval the period of {@code interval}
	 * @param level0CompactionTrigger level-0 tables that start a compaction
	 * @param levelBaseSize target size of level 1
	 * @param levelSizeMultiplier growth of each level's target over the previous one
	 * @param targetTableSize compaction output tables are cut at about this size
	 * @param maxLevels levels including level 0
	 * @param tombstoneGracePeriod the LSM engine's own floor: a compaction purges no
	 * tombstone younger than this, whatever the node allows; the node's rule (a grace
	 * period and a repair) is quorumkv.storage.tombstone-grace-period
	 * @param maxImmutableMemtables memtables waiting for their flush before writers stall
	 * @param maxStall longest stall of a write before it fails with a 503
	 * @param compression how the data blocks of new tables are compressed: {@code lz4}
	 * (the default; the block cache keeps blocks decompressed), {@code none} or
	 * {@code zstd} (less disk, slower reads); each table records its own, so a change
	 * needs no rewrite (compactions rewrite tables under the new setting)
	 * @param blockCache bytes of decompressed data blocks kept in native memory, off the
	 * Java heap (default: a quarter of the maximum heap, at most 512 MB); {@code 0} turns
	 * the cache off
	 * @param incrementalBackups hard-link every table a flush writes into
	 * {@code <data>/backups/} with a checksum record, and every WAL segment into
	 * {@code <data>/backups/wal/}, so that a snapshot plus the tables and segments since
	 * restores to any later time they reach (docs/backup.md, "Incremental backups");
	 * compactions link nothing; the segments' links keep every byte logged until
	 * {@code qkv clear-backups}. LSM only: a node on another backend refuses to start
	 * with it
	 * @param compactionNice the nice value (0 to 19) of the compaction thread on Linux:
	 * above 0 a compaction gives the cores to the event loops first when both want them
	 * (as RocksDB lowers its compaction threads' priority); 0 keeps the JVM's (the
	 * default: at 10 million keys it changed no tail that could be measured,
	 * docs/storage-lsm.md)
	 * @param compactionThroughput the bytes a second a compaction reads, at most
	 * (Cassandra's {@code compaction_throughput}): a compaction spread over time instead
	 * of taking the cores in bursts; {@code 0} (the default) for no limit; one falls back
	 * to full speed while level 0 holds its trigger again
	 */
	public record LsmProperties(@DefaultValue("64MB") DataSize memtableSize, @DefaultValue("4KB") DataSize blockSize,
			@DefaultValue("10") int bloomBitsPerKey, @DefaultValue("interval") FsyncPolicy fsync,
			@DefaultValue("100ms") Duration fsyncInterval, @DefaultValue("4") int level0CompactionTrigger,
			@DefaultValue("256MB") DataSize levelBaseSize, @DefaultValue("10") int levelSizeMultiplier,
			@DefaultValue("64MB") DataSize targetTableSize, @DefaultValue("7") int maxLevels,
			@DefaultValue("0s") Duration tombstoneGracePeriod, @DefaultValue("2") int maxImmutableMemtables,
			@DefaultValue("10s") Duration maxStall, @DefaultValue("lz4") Compression compression,
			@Nullable DataSize blockCache, @DefaultValue("false") boolean incrementalBackups,
			@DefaultValue("0") int compactionNice, @DefaultValue("0B") DataSize compactionThroughput) {

		/** The backend's options for a folder. */
		public LsmOptions toOptions(Path directory) {
			return new LsmOptions(directory, this.memtableSize.toBytes(), (int) this.blockSize.toBytes(),
					this.bloomBitsPerKey, this.fsync, this.fsyncInterval, this.level0CompactionTrigger,
					this.levelBaseSize.toBytes(), this.levelSizeMultiplier, this.targetTableSize.toBytes(),
					this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables, this.maxStall,
					this.compression,
					(this.blockCache != null) ? this.blockCache.toBytes() : LsmOptions.defaultBlockCacheSize(),
					this.incrementalBackups, this.compactionNice, this.compactionThroughput.toBytes());
		}

	}

	/**
	 * The Derby backend (see docs/storage-derby.md); defaults equal
	 * {@code DerbyStorageOptions.defaults}.
	 *
	 * @param poolSize JDBC connections, and threads running them
	 * @param maxQueuedTasks JDBC tasks waiting for a thread; more get 503
	 * @param acquireTimeout longest wait for a pooled connection
	 * @param durability {@code sync-on-commit} (fsync per commit) or {@code no-sync}
	 * @param pageCacheSize pages in Derby's page cache
	 * @param scanBatchSize rows read per range-scan page
	 */
	public record DerbyProperties(@DefaultValue("8") int poolSize, @DefaultValue("1024") int maxQueuedTasks,
			@DefaultValue("5s") Duration acquireTimeout,
			@DefaultValue("sync-on-commit") DerbyStorageOptions.Durability durability,
			@DefaultValue("1000") int pageCacheSize, @DefaultValue("500") int scanBatchSize) {

		/** The backend's options for a folder. */
		public DerbyStorageOptions toOptions(Path directory) {
			return new DerbyStorageOptions(directory, this.poolSize, this.maxQueuedTasks, this.acquireTimeout,
					this.durability, this.pageCacheSize, this.scanBatchSize);
		}

	}

	/**
	 * The H2 backend (see docs/storage-h2.md); defaults equal
	 * {@code H2StorageOptions.defaults}.
	 *
	 * @param poolInitialSize connections opened at start
	 * @param poolMaxSize the most connections, and so statements running at once
	 * @param maxPendingAcquires callers that may wait for a connection; more get 503
	 * @param acquireTimeout longest wait for a connection before a 503
	 * @param durability when an acknowledged write reaches the disk:
	 * {@code sync-each-write}, {@code write-each-commit} or {@code periodic-sync}
	 * @param syncInterval fsync period of {@code write-each-commit} and
	 * {@code periodic-sync}
	 * @param scanPageSize rows per query of a range scan
	 * @param lockTimeout how long a statement waits for a row lock
	 * @param cacheSizeMb H2's page cache in MiB
	 * @param maxUpsertRetries retries of an upsert after a conflict with a concurrent one
	 */
	public record H2Properties(@DefaultValue("2") int poolInitialSize, @DefaultValue("8") int poolMaxSize,
			@DefaultValue("256") int maxPendingAcquires, @DefaultValue("5s") Duration acquireTimeout,
			@DefaultValue("write-each-commit") H2Durability durability, @DefaultValue("100ms") Duration syncInterval,
			@DefaultValue("256") int scanPageSize, @DefaultValue("10s") Duration lockTimeout,
			@DefaultValue("64") int cacheSizeMb, @DefaultValue("16") int maxUpsertRetries) {

		/** The backend's options for a folder. */
		public H2StorageOptions toOptions(Path directory) {
			return new H2StorageOptions(directory, this.poolInitialSize, this.poolMaxSize, this.maxPendingAcquires,
					this.acquireTimeout, this.durability, this.syncInterval, this.scanPageSize, this.lockTimeout,
					this.cacheSizeMb, this.maxUpsertRetries);
		}

	}

	/** The storage engines a node can run on. */
	public enum Backend {

		/** QuorumKV's own log-structured merge tree. */
		LSM,
		/** H2 in file mode through R2DBC. */
		H2,
		/** Embedded Apache Derby through JDBC. */
		DERBY

	}

}
