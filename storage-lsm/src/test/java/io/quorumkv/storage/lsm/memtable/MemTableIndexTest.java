package io.quorumkv.storage.lsm.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import org.junit.jupiter.api.Test;

/**
 * Many new keys: the skip list and the hash index reach every one, also once the index is
 * full and look-ups that miss it search the skip list.
 */
class MemTableIndexTest {

	private static byte[] key(int n) {
		// Not in numeric order as bytes, and of several lengths.
		return ("key-" + Integer.toString(n * 7919 % 1_000_003, 36)).getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void manyNewKeysFromFourThreadsAreAllFoundByGetAndByAScanInKeyOrder() throws Exception {
		int threads = 4;
		int perThread = 50_000;
		MemTable table = new MemTable(64L << 20);
		putConcurrently(table, threads, perThread, 1);
		assertThat(table.indexFull()).as("sized for 64 MiB").isFalse();
		checkAll(table, threads * perThread, 1);
	}

	@Test
	void withTheIndexFullEveryKeyIsStillFoundByGetAndByAScanInKeyOrder() throws Exception {
		int threads = 4;
		int perThread = 2_000;
		// An index of the least capacity, 1024, full after 512 keys.
		MemTable table = new MemTable(4096);
		putConcurrently(table, threads, perThread, 1);
		assertThat(table.indexFull()).isTrue();
		checkAll(table, threads * perThread, 1);
		// Updates of keys the index does not have go through the skip list.
		putConcurrently(table, threads, perThread, 2);
		checkAll(table, threads * perThread, 2);
		assertThat(table.get("key-absent".getBytes(StandardCharsets.UTF_8))).isNull();
	}

	private static void putConcurrently(MemTable table, int threads, int perThread, long timestamp) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				futures.add(pool.submit(() -> {
					for (int i = 0; i < perThread; i++) {
						int n = thread * perThread + i;
						table.put(Entry.value(key(n), value(n, timestamp), timestamp));
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
	}

	private static byte[] value(int n, long timestamp) {
		return (n + "@" + timestamp).getBytes(StandardCharsets.UTF_8);
	}

	private static void checkAll(MemTable table, int keys, long timestamp) {
		assertThat(table.count()).isEqualTo(keys);
		for (int n = 0; n < keys; n++) {
			assertThat(table.get(key(n))).as("key %d", n)
				.isEqualTo(Entry.value(key(n), value(n, timestamp), timestamp));
		}
		int seen = 0;
		byte[] previous = null;
		for (Iterator<Entry> it = table.iterator(); it.hasNext(); seen++) {
			Entry entry = it.next();
			if (previous != null) {
				assertThat(Keys.compare(previous, entry.key())).as("in key order, no duplicate").isNegative();
			}
			assertThat(entry.timestamp()).isEqualTo(timestamp);
			previous = entry.key();
		}
		assertThat(seen).isEqualTo(keys);
	}

}
