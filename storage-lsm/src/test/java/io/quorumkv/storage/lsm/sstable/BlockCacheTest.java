package io.quorumkv.storage.lsm.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The block cache over LZ4 tables: a miss, then hits; eviction within the capacity; a
 * pinned block outliving its eviction; a released table's blocks freed; many readers at
 * once, from a printed seed, reading every value right while the cache churns and its
 * native memory stays bounded.
 */
@ExtendWith(Seeds.class)
class BlockCacheTest {

	private static final int KEYS = 20_000;

	private static final int BLOCK_SIZE = 1024;

	@TempDir
	Path dir;

	private static byte[] key(int i) {
		return String.format("user:%07d", i).getBytes(StandardCharsets.UTF_8);
	}

	private static byte[] value(int i) {
		return ("{\"id\":" + i + ",\"name\":\"user number " + i + "\",\"roles\":[\"reader\",\"writer\"]}")
			.getBytes(StandardCharsets.UTF_8);
	}

	private SsTable open(long number, BlockCache cache) throws IOException {
		Path path = this.dir.resolve(number + ".sst");
		try (SsTableBuilder builder = SsTableBuilder.create(FileIo.real(), path, number, BLOCK_SIZE, 10,
				BlockCodec.LZ4)) {
			for (int i = 0; i < KEYS; i++) {
				builder.add(Entry.value(key(i), value(i), i));
			}
			return builder.finishAndOpen(cache);
		}
	}

	@Test
	void aMissThenHits() throws IOException {
		try (BlockCache cache = BlockCache.create(1 << 20)) {
			SsTable table = open(1, cache);
			try {
				assertThat(table.find(key(7)).value()).isEqualTo(value(7));
				assertThat(cache.misses()).isEqualTo(1);
				assertThat(cache.hits()).isZero();
				assertThat(table.find(key(7)).value()).isEqualTo(value(7));
				assertThat(table.find(key(8)).value()).as("same block").isEqualTo(value(8));
				assertThat(cache.hits()).isEqualTo(2);
				assertThat(cache.misses()).isEqualTo(1);
				assertThat(cache.size()).isPositive().isEqualTo(cache.allocatedBytes());
			}
			finally {
				table.release();
			}
		}
	}

	@Test
	void evictsToStayWithinItsCapacity() throws IOException {
		long capacity = 16L * BLOCK_SIZE;
		try (BlockCache cache = BlockCache.create(capacity)) {
			SsTable table = open(1, cache);
			try {
				for (int i = 0; i < KEYS; i++) {
					assertThat(table.find(key(i)).value()).isEqualTo(value(i));
				}
				cache.cleanUp();
				assertThat(table.blockCount()).isGreaterThan(200);
				assertThat(cache.size()).isPositive().isLessThanOrEqualTo(capacity);
				assertThat(cache.evictions()).isGreaterThan(table.blockCount() - 2L * capacity / BLOCK_SIZE);
				assertThat(cache.allocatedBytes()).as("nothing pinned: evicted blocks freed").isEqualTo(cache.size());
			}
			finally {
				table.release();
			}
		}
	}

	@Test
	void aPinnedBlockOutlivesItsEvictionAndIsFreedByItsReader() throws IOException {
		try (BlockCache cache = BlockCache.create(1 << 20)) {
			SsTable table = open(1, cache);
			try {
				table.find(key(0));
				long offset = table.blockHandle(0).offset();
				BlockCache.Cached pinned = cache.acquire(1, offset);
				assertThat(pinned).isNotNull();
				byte[] before = pinned.data().toArray(ValueLayout.JAVA_BYTE);
				long allocated = cache.allocatedBytes();
				cache.invalidate(1, new long[] { offset });
				assertThat(cache.size()).isZero();
				assertThat(cache.acquire(1, offset)).as("gone from the cache").isNull();
				assertThat(cache.allocatedBytes()).as("still pinned").isEqualTo(allocated);
				assertThat(pinned.data().toArray(ValueLayout.JAVA_BYTE)).isEqualTo(before);
				pinned.release();
				assertThat(cache.allocatedBytes()).isZero();
			}
			finally {
				table.release();
			}
		}
	}

	@Test
	void aReleasedTableFreesItsCachedBlocks() throws IOException {
		try (BlockCache cache = BlockCache.create(64L << 20)) {
			SsTable kept = open(1, cache);
			SsTable dropped = open(2, cache);
			for (int i = 0; i < KEYS; i += 10) {
				kept.find(key(i));
				dropped.find(key(i));
			}
			cache.cleanUp();
			long keptBytes = cache.size() / 2;
			assertThat(keptBytes).isPositive();
			dropped.release();
			cache.cleanUp();
			assertThat(cache.size()).isEqualTo(keptBytes);
			kept.release();
			cache.cleanUp();
			assertThat(cache.size()).isZero();
			assertThat(cache.allocatedBytes()).isZero();
		}
	}

	/**
	 * Four readers of random keys over a cache of 32 blocks, a twentieth of the table:
	 * every value is right, and the native bytes held stay near the capacity (without the
	 * cache's own slack limit, Caffeine's deferred evictions let them reach 15 times it).
	 */
	@Test
	void concurrentReadersReadRightWithinBoundedMemory(Seeds.Seed seed) throws Exception {
		long capacity = 32L * BLOCK_SIZE;
		int readers = 4;
		try (BlockCache cache = BlockCache.create(capacity)) {
			SsTable table = open(1, cache);
			ExecutorService pool = Executors.newFixedThreadPool(readers + 1);
			AtomicBoolean done = new AtomicBoolean();
			AtomicLong peak = new AtomicLong();
			try {
				Future<?> sampler = pool.submit(() -> {
					while (!done.get()) {
						peak.accumulateAndGet(cache.allocatedBytes(), Math::max);
						Thread.onSpinWait();
					}
				});
				List<Future<Integer>> work = new ArrayList<>();
				for (int r = 0; r < readers; r++) {
					Random random = new Random(seed.value() + r);
					work.add(pool.submit(() -> {
						int wrong = 0;
						for (int n = 0; n < 20_000; n++) {
							int i = random.nextInt(KEYS);
							Entry e = table.find(key(i));
							wrong += (e == null || !java.util.Arrays.equals(e.value(), value(i))) ? 1 : 0;
						}
						return wrong;
					}));
				}
				for (Future<Integer> f : work) {
					assertThat(f.get(Duration.ofMinutes(2).toSeconds(), TimeUnit.SECONDS)).as("wrong values").isZero();
				}
				done.set(true);
				sampler.get(10, TimeUnit.SECONDS);
			}
			finally {
				done.set(true);
				pool.shutdownNow();
				table.release();
			}
			System.out.printf("cache: %d hits, %d misses, %d evictions, peak %d native bytes of %d%n", cache.hits(),
					cache.misses(), cache.evictions(), peak.get(), capacity);
			assertThat(cache.hits()).isPositive();
			assertThat(cache.evictions()).isPositive();
			// The capacity, its sixteenth of slack, and a block (at most about twice the
			// block size) pinned or being put by each of the readers, with room to spare.
			assertThat(peak.get()).isLessThanOrEqualTo(capacity + capacity / 16 + 8 * 2 * BLOCK_SIZE);
			assertThat(cache.allocatedBytes()).isZero();
		}
	}

}
