package io.quorumkv.storage.lsm.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class MemArenaTest {

	@Test
	void concurrentAllocationsAcrossManyChunksAreDistinctDisjointAndResolvable() throws Exception {
		MemArena arena = new MemArena();
		int threads = 4;
		int perThread = 20_000;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		List<long[]> refs = new ArrayList<>();
		List<int[]> sizes = new ArrayList<>();
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				long[] mine = new long[perThread];
				int[] mySizes = new int[perThread];
				refs.add(mine);
				sizes.add(mySizes);
				int thread = t;
				futures.add(pool.submit(() -> {
					for (int i = 0; i < perThread; i++) {
						// 8 to 256 bytes: about 2.7 MiB per thread, several chunks.
						int size = 8 * (1 + (i * 7 + thread) % 32);
						long ref = arena.allocate(size);
						mine[i] = ref;
						mySizes[i] = size;
						// Each long of the allocation names its thread and number.
						long[] longs = arena.chunk(ref).longs;
						for (int at = MemArena.offset(ref) >>> 3, n = 0; n < size / 8; n++) {
							longs[at + n] = ((long) thread << 32) | i;
						}
					}
				}));
			}
			for (Future<?> future : futures) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(arena.chunkCount()).as("chunks").isGreaterThan(8);
		// Per chunk, allocations ordered by offset must not overlap.
		TreeMap<Long, Integer> byRef = new TreeMap<>();
		long total = 0;
		for (int t = 0; t < threads; t++) {
			for (int i = 0; i < perThread; i++) {
				long ref = refs.get(t)[i];
				int size = sizes.get(t)[i];
				assertThat(byRef.put(ref, size)).as("a reference handed out twice").isNull();
				assertThat(MemArena.offset(ref) % 8).isZero();
				assertThat(MemArena.offset(ref) + size).isLessThanOrEqualTo(arena.chunk(ref).capacity);
				long[] longs = arena.chunk(ref).longs;
				for (int at = MemArena.offset(ref) >>> 3, n = 0; n < size / 8; n++) {
					assertThat(longs[at + n]).as("thread %d allocation %d", t, i).isEqualTo(((long) t << 32) | i);
				}
				total += size;
			}
		}
		long end = -1;
		for (var entry : byRef.entrySet()) {
			long ref = entry.getKey();
			assertThat(ref).as("overlaps the allocation before it").isGreaterThanOrEqualTo(end);
			end = ref + entry.getValue();
		}
		// The arena's own allocation (reference 0) is none: it was not asked for one.
		assertThat(arena.allocatedBytes()).isEqualTo(total);
	}

	@Test
	void anAllocationOfMoreThanAQuarterChunkGetsAChunkOfItsOwn() {
		MemArena arena = new MemArena();
		long small = arena.allocate(64);
		long large = arena.allocate(MemArena.DEDICATED + 8);
		long after = arena.allocate(64);
		assertThat(small).isZero();
		assertThat(MemArena.offset(large)).isZero();
		assertThat(arena.chunk(large).capacity).isEqualTo(MemArena.DEDICATED + 8);
		assertThat(arena.chunk(large)).isNotSameAs(arena.chunk(small));
		assertThat(after).as("the current chunk goes on").isEqualTo(64);
		long quarter = arena.allocate(MemArena.DEDICATED);
		assertThat(arena.chunk(quarter)).as("a quarter chunk is not dedicated").isSameAs(arena.chunk(small));
		assertThat(arena.allocatedBytes()).isEqualTo(64 + MemArena.DEDICATED + 8 + 64 + MemArena.DEDICATED);
	}

}
