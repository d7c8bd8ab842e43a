package io.quorumkv.storage.lsm.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

class SlotsTest {

	private static final byte[] KEY = { 'k' };

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
	void replaceKeepsTheGreaterVersionInPlaceWhenTheLengthsMatchAndClearEmptiesTheSlot() {
		Slots slots = new Slots();
		int id = slots.add(Version.encode(Entry.value(KEY, bytes(3, (byte) 1), 10)));
		byte[] array = slots.get(id);

		assertThat(slots.replace(id, Entry.value(KEY, bytes(3, (byte) 9), 9))).as("older").isEqualTo(-1);
		assertThat(slots.replace(id, Entry.value(KEY, bytes(3, (byte) 1), 10))).as("equal").isEqualTo(-1);
		assertThat(slots.read(id, KEY)).isEqualTo(Entry.value(KEY, bytes(3, (byte) 1), 10));

		assertThat(slots.replace(id, Entry.value(KEY, bytes(3, (byte) 2), 10))).as("greater value").isEqualTo(3);
		assertThat(slots.get(id)).as("written in place").isSameAs(array);
		assertThat(slots.read(id, KEY)).isEqualTo(Entry.value(KEY, bytes(3, (byte) 2), 10));

		assertThat(slots.replace(id, Entry.tombstone(KEY, 11))).as("a tombstone, another length").isEqualTo(3);
		byte[] tombstone = slots.get(id);
		assertThat(tombstone).isNotSameAs(array);
		assertThat(slots.read(id, KEY)).isEqualTo(Entry.tombstone(KEY, 11));

		assertThat(slots.replace(id, Entry.value(KEY, new byte[0], 12))).as("an empty value, the same length")
			.isEqualTo(0);
		assertThat(slots.get(id)).isSameAs(tombstone);
		assertThat(slots.read(id, KEY)).isEqualTo(Entry.value(KEY, new byte[0], 12));

		slots.clear(id);
		assertThat(slots.get(id)).isNull();
	}

	@Test
	void readersNeverSeeATornVersionWhileWritersReplaceItInPlace() throws Exception {
		Slots slots = new Slots();
		int keys = 4;
		int valueSize = 512;
		for (int k = 0; k < keys; k++) {
			slots.add(Version.encode(Entry.value(KEY, bytes(valueSize, (byte) 0), 0)));
		}
		int writers = 2;
		int readers = 2;
		int writesPerWriter = 200_000;
		ExecutorService pool = Executors.newFixedThreadPool(writers + readers);
		AtomicBoolean writing = new AtomicBoolean(true);
		try {
			List<Future<Long>> readsDone = new ArrayList<>();
			for (int r = 0; r < readers; r++) {
				readsDone.add(pool.submit(() -> {
					long reads = 0;
					long[] last = new long[keys];
					while (writing.get() || reads < 1_000) {
						int k = (int) (reads % keys);
						Entry entry = slots.read(k, KEY);
						// Every value written is its timestamp's low byte repeated: a
						// copy
						// taken while a writer was inside would mix two of them.
						assertThat(entry.value()).as("value of timestamp %d", entry.timestamp())
							.containsOnly((byte) entry.timestamp());
						assertThat(entry.timestamp()).as("never goes back").isGreaterThanOrEqualTo(last[k]);
						last[k] = entry.timestamp();
						reads++;
					}
					return reads;
				}));
			}
			List<Future<?>> writesDone = new ArrayList<>();
			for (int w = 0; w < writers; w++) {
				int writer = w;
				writesDone.add(pool.submit(() -> {
					for (int i = 1; i <= writesPerWriter; i++) {
						long timestamp = 2L * i + writer;
						slots.replace(i % keys, Entry.value(KEY, bytes(valueSize, (byte) timestamp), timestamp));
					}
				}));
			}
			for (Future<?> future : writesDone) {
				future.get(60, TimeUnit.SECONDS);
			}
			writing.set(false);
			for (Future<Long> future : readsDone) {
				assertThat(future.get(60, TimeUnit.SECONDS)).isPositive();
			}
		}
		finally {
			writing.set(false);
			pool.shutdownNow();
		}
		for (int k = 0; k < keys; k++) {
			// The greatest timestamp written to key k: the last i with i % keys == k,
			// from
			// writer 1.
			int lastI = writesPerWriter - Math.floorMod(writesPerWriter - k, keys);
			long greatest = 2L * lastI + 1;
			assertThat(slots.read(k, KEY)).isEqualTo(Entry.value(KEY, bytes(valueSize, (byte) greatest), greatest));
			assertThat(slots.stamp(k)).as("unlocked, %d writes", writesPerWriter * writers / keys).isEven();
		}
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

	private static byte[] bytes(int length, byte fill) {
		byte[] bytes = new byte[length];
		Arrays.fill(bytes, fill);
		return bytes;
	}

	private static byte[] version(int n) {
		return new byte[] { (byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n };
	}

}
