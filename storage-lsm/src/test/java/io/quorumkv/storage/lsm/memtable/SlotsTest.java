package io.quorumkv.storage.lsm.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class SlotsTest {

	@Test
	void slotsAcrossSeveralChunksKeepTheirVersions() {
		Slots slots = new Slots();
		int count = 3 * Slots.CHUNK + 5;
		for (int i = 0; i < count; i++) {
			assertThat(slots.add(version(i))).isEqualTo(i);
		}
		for (int i = 0; i < count; i++) {
			assertThat(slots.get(i)).isEqualTo(version(i));
		}
	}

	@Test
	void compareAndSetReplacesOnlyTheExpectedVersionAndClearEmptiesTheSlot() {
		Slots slots = new Slots();
		byte[] first = version(1);
		int id = slots.add(first);
		assertThat(slots.compareAndSet(id, version(1), version(2))).as("another array with the same bytes").isFalse();
		byte[] second = version(2);
		assertThat(slots.compareAndSet(id, first, second)).isTrue();
		assertThat(slots.get(id)).isSameAs(second);
		slots.clear(id);
		assertThat(slots.get(id)).isNull();
	}

	@Test
	void concurrentAddsGetDistinctSlotsWhileTheChunksGrow() throws Exception {
		Slots slots = new Slots();
		int threads = 4;
		int perThread = 2 * Slots.CHUNK + 100;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		List<List<Integer>> ids = new ArrayList<>();
		try {
			List<Future<List<Integer>>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				futures.add(pool.submit(() -> {
					List<Integer> mine = new ArrayList<>();
					for (int i = 0; i < perThread; i++) {
						mine.add(slots.add(version(thread * perThread + i)));
					}
					return mine;
				}));
			}
			for (Future<List<Integer>> future : futures) {
				ids.add(future.get(60, TimeUnit.SECONDS));
			}
		}
		finally {
			pool.shutdownNow();
		}
		List<Integer> all = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			for (int i = 0; i < perThread; i++) {
				int id = ids.get(t).get(i);
				all.add(id);
				assertThat(slots.get(id)).isEqualTo(version(t * perThread + i));
			}
		}
		assertThat(all).doesNotHaveDuplicates().hasSize(threads * perThread);
		assertThat(all).allMatch((id) -> id >= 0 && id < threads * perThread);
	}

	private static byte[] version(int n) {
		return new byte[] { (byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n };
	}

}
