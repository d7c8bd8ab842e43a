package io.quorumkv.bench;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteOptions;

/**
 * The native handles of one RocksDB opened the way its users configure it, each matched
 * to the LSM's default where the LSM has one ({@code LsmOptions.defaults}).
 *
 * <ul>
 * <li>WAL on, no fsync per write ({@code sync=false}); {@link RocksDbStorage} forces the
 * WAL every {@value #WAL_SYNC_INTERVAL_MILLIS} ms, the LSM's
 * {@code FsyncPolicy.INTERVAL};</li>
 * <li>64 MiB write buffer, at most two (the LSM: a 64 MiB memtable);</li>
 * <li>an explicit LRU block cache of {@value #BLOCK_CACHE_MIB} MiB holding data, index
 * and filter blocks, level-0 index and filter pinned (RocksDB's tuning guide; its
 * built-in default is a 32 MiB cache without index and filter blocks);</li>
 * <li>block-based tables, 4 KiB blocks, a 10 bits-per-key full bloom filter (the LSM: 4
 * KiB blocks, 10 bits per key);</li>
 * <li>no compression (the LSM compresses only key prefixes, which RocksDB's blocks do
 * too);</li>
 * <li>leveled compaction with RocksDB's defaults (level-0 trigger 4, level base 256 MiB,
 * multiplier 10, 64 MiB files), which the LSM's defaults copy, and two background jobs
 * for two cores.</li>
 * </ul>
 *
 * {@link #close()} frees them; call it after the database is closed.
 */
final class RocksSettings implements AutoCloseable {

	static final long WRITE_BUFFER_SIZE = 64L << 20;

	static final long BLOCK_SIZE = 4096;

	static final double BLOOM_BITS_PER_KEY = 10;

	static final long BLOCK_CACHE_MIB = 64;

	static final long WAL_SYNC_INTERVAL_MILLIS = 100;

	final LRUCache blockCache;

	final BloomFilter bloom;

	final Options options;

	final WriteOptions writeOptions;

	RocksSettings() {
		this.blockCache = new LRUCache(BLOCK_CACHE_MIB << 20);
		this.bloom = new BloomFilter(BLOOM_BITS_PER_KEY, false);
		BlockBasedTableConfig table = new BlockBasedTableConfig().setBlockSize(BLOCK_SIZE)
			.setBlockCache(this.blockCache)
			.setFilterPolicy(this.bloom)
			.setCacheIndexAndFilterBlocks(true)
			.setPinL0FilterAndIndexBlocksInCache(true);
		this.options = new Options().setCreateIfMissing(true)
			.setWriteBufferSize(WRITE_BUFFER_SIZE)
			.setMaxWriteBufferNumber(2)
			.setCompressionType(CompressionType.NO_COMPRESSION)
			.setBottommostCompressionType(CompressionType.NO_COMPRESSION)
			.setCompactionStyle(CompactionStyle.LEVEL)
			.setMaxBackgroundJobs(2)
			.setTableFormatConfig(table);
		this.writeOptions = new WriteOptions().setSync(false).setDisableWAL(false);
	}

	@Override
	public void close() {
		this.writeOptions.close();
		this.options.close();
		this.bloom.close();
		this.blockCache.close();
	}

}
