package io.quorumkv.storage.lsm;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The configuration of an {@link LsmStorage}: validated, immutable, made of scalar types
 * so that the service can bind it from {@code quorumkv.storage.lsm.*} properties.
 *
 * <pre>{@code
 * LsmOptions options = LsmOptions.defaults(Path.of("data/node1"))
 *     .withMemtableSize(16 << 20)
 *     .withFsync(FsyncPolicy.ALWAYS);
 * try (LsmStorage storage = LsmStorage.open(options)) { ... }
 * }</pre>
 *
 * @param directory the data folder, created when missing
 * @param memtableSize bytes of entries a memtable holds before it is frozen and flushed
 * (default 64 MiB, at most 1 GiB: a WAL segment is replayed in memory)
 * @param blockSize target size of an SSTable data block (default 4 KiB)
 * @param bloomBitsPerKey bloom filter bits per key; 10 gives about 1% false positives
 * @param fsync when the write-ahead log is forced to disk (default
 * {@link FsyncPolicy#INTERVAL}); see {@link FsyncPolicy} for the trade-off
 * @param fsyncInterval the period of {@link FsyncPolicy#INTERVAL} (default 100 ms)
 * @param level0CompactionTrigger number of level-0 tables that starts a compaction into
 * level 1 (default 4)
 * @param levelBaseSize target bytes of level 1 (default 256 MiB)
 * @param levelSizeMultiplier each level's target is this times the previous (default 10)
 * @param targetTableSize compaction output files are cut at about this size (default 64
 * MiB)
 * @param maxLevels number of levels including level 0 (default 7)
 * @param tombstoneGracePeriod a tombstone is purged only once older than this (by its
 * hybrid-logical-clock timestamp), so that late writes and repairs cannot resurrect a
 * deleted key (default 10 days, as Cassandra's {@code gc_grace_seconds})
 * @param maxImmutableMemtables frozen memtables waiting for their flush before writers
 * are stalled (default 2)
 * @param maxStall how long a stalled upsert waits before failing with
 * {@link io.quorumkv.storage.StorageOverloadedException} (default 10 s)
 * @param compression how the data blocks of new tables are compressed (default
 * {@link Compression#LZ4}; the block cache keeps decompressed blocks, see
 * docs/storage-lsm.md); tables keep the codec they were written with, so changing it
 * needs no rewrite
 * @param blockCacheSize bytes of decompressed data blocks kept in native memory, off the
 * Java heap (default {@link #defaultBlockCacheSize()}: a quarter of the maximum heap, at
 * most 512 MiB); 0 turns the cache off
 * @param incrementalBackups hard-links every table a flush writes, once it is durable and
 * in the manifest, into {@code backups/} of the data folder with a checksum record
 * ({@link IncrementalBackup}), and every WAL segment, when it is created, into
 * {@code backups/wal/} ({@link WalBackup}), so that a snapshot plus the tables flushed
 * and the segments written since reaches any later point up to the last flush
 * (docs/backup.md); compactions link nothing (default off)
 * @param compactionNice the nice value (0 to 19) the compaction thread runs at, on Linux:
 * above 0, a compaction gives way to the request threads when the cores are short, and
 * runs whenever one is free ({@link CpuPriority}); 0 (the default) leaves it at the JVM's
 * own priority. Flushes keep the JVM's priority: a flush that falls behind stalls writers
 * @param compactionThroughput the bytes a second of tables a compaction reads, at most
 * (Cassandra's {@code compaction_throughput}): it spreads a compaction over time instead
 * of taking the cores in bursts; 0 (the default) for no limit. A compaction goes at full
 * speed while level 0 holds its trigger again (the writers would stall before long)
 */
public record LsmOptions(Path directory, long memtableSize, int blockSize, int bloomBitsPerKey, FsyncPolicy fsync,
		Duration fsyncInterval, int level0CompactionTrigger, long levelBaseSize, int levelSizeMultiplier,
		long targetTableSize, int maxLevels, Duration tombstoneGracePeriod, int maxImmutableMemtables,
		Duration maxStall, Compression compression, long blockCacheSize, boolean incrementalBackups, int compactionNice,
		long compactionThroughput) {

	public LsmOptions {
		Objects.requireNonNull(directory, "directory");
		Objects.requireNonNull(fsync, "fsync");
		Objects.requireNonNull(fsyncInterval, "fsyncInterval");
		Objects.requireNonNull(tombstoneGracePeriod, "tombstoneGracePeriod");
		Objects.requireNonNull(maxStall, "maxStall");
		Objects.requireNonNull(compression, "compression");
		require(memtableSize >= 4096 && memtableSize <= (1L << 30), "memtableSize must be in [4 KiB, 1 GiB]");
		require(blockSize >= 256 && blockSize <= (1 << 24), "blockSize must be in [256 B, 16 MiB]");
		require(bloomBitsPerKey >= 1 && bloomBitsPerKey <= 64, "bloomBitsPerKey must be in [1, 64]");
		require(!fsyncInterval.isNegative() && !fsyncInterval.isZero(), "fsyncInterval must be positive");
		require(level0CompactionTrigger >= 2, "level0CompactionTrigger must be at least 2");
		require(levelBaseSize >= 4096, "levelBaseSize must be at least 4 KiB");
		require(levelSizeMultiplier >= 2, "levelSizeMultiplier must be at least 2");
		require(targetTableSize >= 4096, "targetTableSize must be at least 4 KiB");
		require(maxLevels >= 2 && maxLevels <= 16, "maxLevels must be in [2, 16]");
		require(!tombstoneGracePeriod.isNegative(), "tombstoneGracePeriod must not be negative");
		require(maxImmutableMemtables >= 1, "maxImmutableMemtables must be at least 1");
		require(!maxStall.isNegative(), "maxStall must not be negative");
		require(blockCacheSize >= 0, "blockCacheSize must not be negative");
		require(compactionNice >= 0 && compactionNice <= 19, "compactionNice must be in [0, 19]");
		require(compactionThroughput >= 0, "compactionThroughput must not be negative");
	}

	/** The defaults on {@code directory}. */
	public static LsmOptions defaults(Path directory) {
		return new LsmOptions(directory, 64L << 20, 4096, 10, FsyncPolicy.INTERVAL, Duration.ofMillis(100), 4,
				256L << 20, 10, 64L << 20, 7, Duration.ofDays(10), 2, Duration.ofSeconds(10), Compression.LZ4,
				defaultBlockCacheSize(), false, 0, 0);
	}

	/**
	 * The default block cache: a quarter of the maximum heap, at most 512 MiB (the
	 * default of Cassandra's off-heap chunk cache); 256 MiB beside a 1 GiB heap.
	 */
	public static long defaultBlockCacheSize() {
		return Math.min(512L << 20, Runtime.getRuntime().maxMemory() / 4);
	}

	private static void require(boolean condition, String message) {
		if (!condition) {
			throw new IllegalArgumentException(message);
		}
	}

	public LsmOptions withMemtableSize(long bytes) {
		return new LsmOptions(this.directory, bytes, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables,
				this.maxStall, this.compression, this.blockCacheSize, this.incrementalBackups, this.compactionNice,
				this.compactionThroughput);
	}

	public LsmOptions withBlockSize(int bytes) {
		return new LsmOptions(this.directory, this.memtableSize, bytes, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables,
				this.maxStall, this.compression, this.blockCacheSize, this.incrementalBackups, this.compactionNice,
				this.compactionThroughput);
	}

	public LsmOptions withBloomBitsPerKey(int bits) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, bits, this.fsync, this.fsyncInterval,
				this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier, this.targetTableSize,
				this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables, this.maxStall, this.compression,
				this.blockCacheSize, this.incrementalBackups, this.compactionNice, this.compactionThroughput);
	}

	public LsmOptions withFsync(FsyncPolicy policy) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, policy,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables,
				this.maxStall, this.compression, this.blockCacheSize, this.incrementalBackups, this.compactionNice,
				this.compactionThroughput);
	}

	public LsmOptions withFsyncInterval(Duration interval) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				interval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables,
				this.maxStall, this.compression, this.blockCacheSize, this.incrementalBackups, this.compactionNice,
				this.compactionThroughput);
	}

	/**
	 * Compaction settings in one call: level-0 trigger, level-1 size, multiplier, file
	 * size.
	 */
	public LsmOptions withCompaction(int level0Trigger, long levelBase, int multiplier, long tableSize) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, level0Trigger, levelBase, multiplier, tableSize, this.maxLevels,
				this.tombstoneGracePeriod, this.maxImmutableMemtables, this.maxStall, this.compression,
				this.blockCacheSize, this.incrementalBackups, this.compactionNice, this.compactionThroughput);
	}

	public LsmOptions withMaxLevels(int levels) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, levels, this.tombstoneGracePeriod, this.maxImmutableMemtables, this.maxStall,
				this.compression, this.blockCacheSize, this.incrementalBackups, this.compactionNice,
				this.compactionThroughput);
	}

	public LsmOptions withTombstoneGracePeriod(Duration grace) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, grace, this.maxImmutableMemtables, this.maxStall,
				this.compression, this.blockCacheSize, this.incrementalBackups, this.compactionNice,
				this.compactionThroughput);
	}

	public LsmOptions withMaxImmutableMemtables(int count) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, count, this.maxStall, this.compression,
				this.blockCacheSize, this.incrementalBackups, this.compactionNice, this.compactionThroughput);
	}

	public LsmOptions withMaxStall(Duration stall) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables, stall,
				this.compression, this.blockCacheSize, this.incrementalBackups, this.compactionNice,
				this.compactionThroughput);
	}

	public LsmOptions withCompression(Compression codec) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables,
				this.maxStall, codec, this.blockCacheSize, this.incrementalBackups, this.compactionNice,
				this.compactionThroughput);
	}

	public LsmOptions withBlockCacheSize(long bytes) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables,
				this.maxStall, this.compression, bytes, this.incrementalBackups, this.compactionNice,
				this.compactionThroughput);
	}

	public LsmOptions withIncrementalBackups(boolean on) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables,
				this.maxStall, this.compression, this.blockCacheSize, on, this.compactionNice,
				this.compactionThroughput);
	}

	public LsmOptions withCompactionNice(int nice) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables,
				this.maxStall, this.compression, this.blockCacheSize, this.incrementalBackups, nice,
				this.compactionThroughput);
	}

	public LsmOptions withCompactionThroughput(long bytesPerSecond) {
		return new LsmOptions(this.directory, this.memtableSize, this.blockSize, this.bloomBitsPerKey, this.fsync,
				this.fsyncInterval, this.level0CompactionTrigger, this.levelBaseSize, this.levelSizeMultiplier,
				this.targetTableSize, this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables,
				this.maxStall, this.compression, this.blockCacheSize, this.incrementalBackups, this.compactionNice,
				bytesPerSecond);
	}

	/** Target bytes of {@code level} (1-based; level 0 is bounded by table count). */
	public long levelTargetSize(int level) {
		long size = this.levelBaseSize;
		for (int i = 1; i < level; i++) {
			size = (size > Long.MAX_VALUE / this.levelSizeMultiplier) ? Long.MAX_VALUE
					: size * this.levelSizeMultiplier;
		}
		return size;
	}

}
