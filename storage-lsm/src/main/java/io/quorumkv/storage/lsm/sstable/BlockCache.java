package io.quorumkv.storage.lsm.sstable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import org.jspecify.annotations.Nullable;

/**
 * A bounded cache of decompressed data blocks, shared by the tables of one engine, the
 * blocks off the Java heap.
 *
 * <p>
 * The index is a Caffeine cache (W-TinyLFU eviction, bounded by the blocks' bytes): its
 * reads take no lock (a concurrent hash map, with striped buffers recording the
 * accesses), so concurrent readers do not contend on one lock; its maintenance runs on
 * the callers' threads. Each value is a block copied into native memory
 * ({@link NativeMemory}) and reference counted: the cache holds one reference, a reader
 * pins the block with {@link #acquire} for as long as it decodes it, and the last release
 * frees the memory. An evicted block being read is therefore freed only when its reader
 * is done: the native bytes allocated ({@link #allocatedBytes()}) stay below the capacity
 * plus one block per reader in flight.
 *
 * <p>
 * Only blocks that passed their checksum and decoded are put in the cache; a hit is
 * served from memory without a second check. Keys are (table number, block offset): table
 * numbers are never reused, and a table released for good drops its blocks
 * ({@link #invalidate}).
 */
public final class BlockCache implements AutoCloseable {

	/** A cache that holds nothing. */
	public static final BlockCache DISABLED = new BlockCache(0);

	private final long capacity;

	private final @Nullable Cache<Key, Cached> cache;

	private final LongAdder hits = new LongAdder();

	private final LongAdder misses = new LongAdder();

	private final LongAdder evictions = new LongAdder();

	private final AtomicLong allocated = new AtomicLong();

	/** Native bytes past which a writer runs the cache's maintenance itself. */
	private final long slackLimit;

	private BlockCache(long capacity) {
		this.capacity = capacity;
		this.slackLimit = capacity + capacity / 16;
		this.cache = (capacity == 0) ? null
				: Caffeine.newBuilder()
					.maximumWeight(capacity)
					.weigher((Key key, Cached block) -> (int) Math.min(Integer.MAX_VALUE, block.data.byteSize()))
					.executor(Runnable::run)
					.removalListener((Key key, Cached block, RemovalCause cause) -> {
						if (cause.wasEvicted()) {
							this.evictions.increment();
						}
						if (block != null) {
							block.release();
						}
					})
					.build();
	}

	/** A cache of at most {@code capacityBytes} bytes of blocks; 0 caches nothing. */
	public static BlockCache create(long capacityBytes) {
		if (capacityBytes < 0) {
			throw new IllegalArgumentException("capacityBytes must not be negative");
		}
		return (capacityBytes == 0) ? DISABLED : new BlockCache(capacityBytes);
	}

	boolean enabled() {
		return this.cache != null;
	}

	/**
	 * The block of {@code table} at {@code offset}, pinned: the caller must
	 * {@link Cached#release()} it; {@code null} on a miss.
	 */
	@Nullable Cached acquire(long table, long offset) {
		if (this.cache == null) {
			return null;
		}
		Cached block = this.cache.getIfPresent(new Key(table, offset));
		if (block != null && block.tryRetain()) {
			this.hits.increment();
			return block;
		}
		this.misses.increment();
		return null;
	}

	/**
	 * Caches a copy of a decompressed, verified block and answers it pinned, as
	 * {@link #acquire} does (the caller releases it); {@code null} when it is not cached
	 * (larger than the whole cache).
	 */
	@Nullable Cached put(long table, long offset, byte[] raw) {
		if (this.cache == null || raw.length > this.capacity) {
			return null;
		}
		MemorySegment data = NativeMemory.allocate(raw.length);
		MemorySegment.copy(raw, 0, data, ValueLayout.JAVA_BYTE, 0, raw.length);
		long held = this.allocated.addAndGet(raw.length);
		Cached block = new Cached(data);
		block.tryRetain();
		this.cache.put(new Key(table, offset), block);
		if (held > this.slackLimit) {
			// Caffeine evicts in its maintenance, which a busy cache may defer by up to
			// its
			// write buffer (hundreds of blocks): past a sixteenth over the capacity this
			// writer waits for it, so the memory stays bounded.
			this.cache.cleanUp();
		}
		return block;
	}

	/** Drops the cached blocks of {@code table} at {@code offsets}. */
	void invalidate(long table, long[] offsets) {
		if (this.cache != null) {
			for (long offset : offsets) {
				this.cache.invalidate(new Key(table, offset));
			}
		}
	}

	/** Lookups answered from the cache. */
	public long hits() {
		return this.hits.sum();
	}

	/** Lookups of a compressed block not in the cache. */
	public long misses() {
		return this.misses.sum();
	}

	/** Blocks dropped to stay within the capacity. */
	public long evictions() {
		return this.evictions.sum();
	}

	/** Bytes of the blocks in the cache, after running its pending maintenance. */
	public long size() {
		if (this.cache == null) {
			return 0;
		}
		this.cache.cleanUp();
		return this.cache.policy().eviction().orElseThrow().weightedSize().orElse(0);
	}

	public long capacity() {
		return this.capacity;
	}

	/**
	 * Native bytes allocated for blocks and not freed yet: those in the cache and those
	 * evicted while a reader still holds them.
	 */
	public long allocatedBytes() {
		return this.allocated.get();
	}

	/** Runs pending maintenance (evictions and removals) now. */
	void cleanUp() {
		if (this.cache != null) {
			this.cache.cleanUp();
		}
	}

	/** Drops every block; blocks still pinned are freed by their last reader. */
	@Override
	public void close() {
		if (this.cache != null) {
			this.cache.invalidateAll();
			this.cache.cleanUp();
		}
	}

	private record Key(long table, long offset) {
	}

	/** A block in native memory with its reference count (the cache's one, readers'). */
	final class Cached {

		private final MemorySegment data;

		private final AtomicInteger refs = new AtomicInteger(1);

		Cached(MemorySegment data) {
			this.data = data;
		}

		/** The block's bytes, valid while pinned. */
		MemorySegment data() {
			return this.data;
		}

		boolean tryRetain() {
			int n;
			do {
				n = this.refs.get();
				if (n == 0) {
					return false;
				}
			}
			while (!this.refs.compareAndSet(n, n + 1));
			return true;
		}

		void release() {
			int n = this.refs.decrementAndGet();
			if (n == 0) {
				NativeMemory.free(this.data);
				BlockCache.this.allocated.addAndGet(-this.data.byteSize());
			}
			else if (n < 0) {
				throw new IllegalStateException("cached block released too often");
			}
		}

	}

}
