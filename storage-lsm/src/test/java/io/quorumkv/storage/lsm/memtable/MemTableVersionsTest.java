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

/**
 * A key's version record in the memtable's arena, under its node's sequence lock: written
 * over in place when the newer version fits, into a new record otherwise, and never read
 * torn.
 */
class MemTableVersionsTest {

	private static final byte[] KEY = { 'k' };

	@Test
	void aGreaterVersionIsWrittenInPlaceWhenItFitsAndIntoANewRecordOtherwise() {
		MemTable table = new MemTable();
		assertThat(table.put(Entry.value(KEY, bytes(3, (byte) 1), 10))).isTrue();
		long record = table.versionOf(KEY);
		assertThat(record).isNotZero();

		assertThat(table.put(Entry.value(KEY, bytes(3, (byte) 9), 9))).as("older").isFalse();
		assertThat(table.put(Entry.value(KEY, bytes(3, (byte) 1), 10))).as("equal").isFalse();
		assertThat(table.get(KEY)).isEqualTo(Entry.value(KEY, bytes(3, (byte) 1), 10));

		assertThat(table.put(Entry.value(KEY, bytes(3, (byte) 2), 10))).as("greater value").isTrue();
		assertThat(table.versionOf(KEY)).as("written in place").isEqualTo(record);
		assertThat(table.get(KEY)).isEqualTo(Entry.value(KEY, bytes(3, (byte) 2), 10));

		assertThat(table.put(Entry.tombstone(KEY, 11))).as("a tombstone, within the slack").isTrue();
		assertThat(table.versionOf(KEY)).isEqualTo(record);
		assertThat(table.get(KEY)).isEqualTo(Entry.tombstone(KEY, 11));

		assertThat(table.put(Entry.value(KEY, bytes(8, (byte) 3), 12))).as("up to the padded capacity").isTrue();
		assertThat(table.versionOf(KEY)).isEqualTo(record);
		assertThat(table.get(KEY)).isEqualTo(Entry.value(KEY, bytes(8, (byte) 3), 12));

		assertThat(table.put(Entry.value(KEY, bytes(9, (byte) 4), 13))).as("a longer value").isTrue();
		long longer = table.versionOf(KEY);
		assertThat(longer).isNotEqualTo(record);
		assertThat(table.get(KEY)).isEqualTo(Entry.value(KEY, bytes(9, (byte) 4), 13));
		assertThat(table.stampOf(KEY)).as("unlocked after 5 kept writes, the lost ones leave it").isEqualTo(10);
		assertThat(table.count()).isOne();
	}

	@Test
	void readersNeverSeeATornVersionWhileWritersReplaceItInPlace() throws Exception {
		MemTable table = new MemTable();
		int keys = 4;
		int valueSize = 512;
		for (int k = 0; k < keys; k++) {
			table.put(Entry.value(key(k), bytes(valueSize, (byte) 0), 0));
		}
		long[] records = new long[keys];
		for (int k = 0; k < keys; k++) {
			records[k] = table.versionOf(key(k));
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
						Entry entry = table.get(key(k));
						// Every value written is its timestamp's low byte repeated: a
						// copy taken while a writer was inside would mix two of them.
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
						int k = i % keys;
						table.put(Entry.value(key(k), bytes(valueSize, (byte) timestamp), timestamp));
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
			// from writer 1.
			int lastI = writesPerWriter - Math.floorMod(writesPerWriter - k, keys);
			long greatest = 2L * lastI + 1;
			assertThat(table.get(key(k))).isEqualTo(Entry.value(key(k), bytes(valueSize, (byte) greatest), greatest));
			assertThat(table.versionOf(key(k))).as("every write in place").isEqualTo(records[k]);
			assertThat(table.stampOf(key(k))).as("unlocked, %d writes", writesPerWriter * writers / keys).isEven();
		}
		assertThat(table.abandonedBytes()).isZero();
	}

	private static byte[] key(int k) {
		return new byte[] { 'k', (byte) k };
	}

	private static byte[] bytes(int length, byte fill) {
		byte[] bytes = new byte[length];
		Arrays.fill(bytes, fill);
		return bytes;
	}

}
