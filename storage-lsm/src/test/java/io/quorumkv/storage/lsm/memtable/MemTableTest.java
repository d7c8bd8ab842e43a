package io.quorumkv.storage.lsm.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

class MemTableTest {

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void keepsOnlyTheGreatestVersionAndSaysWhichPutWon() {
		MemTable table = new MemTable();
		Entry first = Entry.value(bytes("k"), bytes("one"), 10);
		Entry newer = Entry.value(bytes("k"), bytes("three"), 20);
		Entry older = Entry.value(bytes("k"), bytes("zero"), 5);
		assertThat(table.put(first)).isTrue();
		assertThat(table.put(newer)).isTrue();
		assertThat(table.put(older)).isFalse();
		assertThat(table.put(newer)).as("the same entry again").isFalse();
		assertThat(table.get(bytes("k"))).isEqualTo(newer);
		assertThat(table.count()).isOne();
	}

	/**
	 * The size: a new key adds its entry's bytes and {@link MemTable#ENTRY_OVERHEAD}; a
	 * version written over the record in place adds the difference of the value lengths
	 * (nothing for the same length); a version that takes a new record adds that too and
	 * the abandoned record's bytes (header and capacity), which stay in the arena.
	 */
	@Test
	void sizeCountsInsertsWithOverheadReplacementsByDifferenceAndAbandonedRecords() {
		MemTable table = new MemTable();
		Entry small = Entry.value(bytes("k"), bytes("v"), 1);
		Entry large = Entry.value(bytes("k"), new byte[100], 3);
		table.put(small);
		assertThat(table.sizeInBytes()).isEqualTo(small.sizeInBytes() + MemTable.ENTRY_OVERHEAD);
		long record = table.versionOf(bytes("k"));
		table.put(Entry.value(bytes("k"), bytes("w"), 2));
		assertThat(table.versionOf(bytes("k"))).as("the same length, in place").isEqualTo(record);
		assertThat(table.sizeInBytes()).isEqualTo(small.sizeInBytes() + MemTable.ENTRY_OVERHEAD);
		table.put(large);
		assertThat(table.versionOf(bytes("k"))).as("a longer value, a new record").isNotEqualTo(record);
		// The record of "v": its header and a capacity of 8.
		long abandoned = Version.HEADER + 8;
		assertThat(table.abandonedBytes()).isEqualTo(abandoned);
		assertThat(table.sizeInBytes()).isEqualTo(large.sizeInBytes() + MemTable.ENTRY_OVERHEAD + abandoned);
		table.put(Entry.tombstone(bytes("k"), 1));
		assertThat(table.sizeInBytes()).as("a losing put changes nothing")
			.isEqualTo(large.sizeInBytes() + MemTable.ENTRY_OVERHEAD + abandoned);
		Entry shorter = Entry.value(bytes("k"), new byte[60], 4);
		record = table.versionOf(bytes("k"));
		table.put(shorter);
		assertThat(table.versionOf(bytes("k"))).as("a shorter value within the slack, in place").isEqualTo(record);
		assertThat(table.sizeInBytes()).isEqualTo(shorter.sizeInBytes() + MemTable.ENTRY_OVERHEAD + abandoned);
		Entry tombstone = Entry.tombstone(bytes("k"), 5);
		table.put(tombstone);
		assertThat(table.versionOf(bytes("k"))).as("a record far too large for it is left").isNotEqualTo(record);
		abandoned += Version.HEADER + 104;
		assertThat(table.abandonedBytes()).isEqualTo(abandoned);
		assertThat(table.sizeInBytes()).isEqualTo(tombstone.sizeInBytes() + MemTable.ENTRY_OVERHEAD + abandoned);
		assertThat(table.arena().allocatedBytes()).as("what the arena handed out")
			.isEqualTo(table.liveBytes() + table.abandonedBytes());
	}

	@Test
	void aKeyRewrittenWithGrowingValuesGrowsTheSizeWithTheArena() {
		MemTable table = new MemTable();
		for (int i = 1; i <= 2_000; i++) {
			table.put(Entry.value(bytes("k"), new byte[8 * i], i));
		}
		assertThat(table.count()).isOne();
		assertThat(table.arena().allocatedBytes()).as("about 16 MB of records").isGreaterThan(16_000_000);
		// Beyond the size: only the head node and the padding of the key's node.
		assertThat(table.arena().allocatedBytes()).as("the arena's use, bounded by the size")
			.isLessThanOrEqualTo(table.sizeInBytes() + 256);
	}

	/**
	 * Concurrent puts of 8 keys: the size is the kept entries' with overhead plus the
	 * abandoned bytes (records, and nodes of writers that lost a first insert), and that
	 * and the live nodes and records are all that the arena handed out.
	 */
	@Test
	void concurrentPutsOfFewKeysConvergeAndKeepTheSizeExact() throws Exception {
		MemTable table = new MemTable();
		int threads = 4;
		int perThread = 20_000;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int id = t;
				futures.add(pool.submit(() -> {
					for (int i = 0; i < perThread; i++) {
						// 8 hot keys, interleaved timestamps, values of varying size
						table.put(
								Entry.value(bytes("key-" + (i % 8)), new byte[(i + id) % 50], (long) i * threads + id));
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
		long expectedSize = 0;
		for (int k = 0; k < 8; k++) {
			Entry kept = table.get(bytes("key-" + k));
			// The greatest timestamp of key k: the last i with i % 8 == k, from the last
			// thread.
			int lastI = perThread - 8 + k;
			assertThat(kept.timestamp()).isEqualTo((long) lastI * threads + (threads - 1));
			expectedSize += kept.sizeInBytes() + MemTable.ENTRY_OVERHEAD;
		}
		assertThat(table.count()).isEqualTo(8);
		assertThat(table.abandonedBytes()).as("values grew past their records").isPositive();
		assertThat(table.sizeInBytes()).isEqualTo(expectedSize + table.abandonedBytes());
		assertThat(table.arena().allocatedBytes()).isEqualTo(table.liveBytes() + table.abandonedBytes());
	}

	@Test
	void onEqualTimestampsATombstoneAndThenTheGreaterValueWin() {
		MemTable table = new MemTable();
		assertThat(table.put(Entry.value(bytes("k"), bytes("b"), 7))).isTrue();
		assertThat(table.put(Entry.value(bytes("k"), bytes("a"), 7))).isFalse();
		assertThat(table.put(Entry.value(bytes("k"), bytes("c"), 7))).isTrue();
		assertThat(table.get(bytes("k")).value()).isEqualTo(bytes("c"));
		assertThat(table.put(Entry.tombstone(bytes("k"), 7))).isTrue();
		assertThat(table.put(Entry.value(bytes("k"), bytes("z"), 7))).isFalse();
		assertThat(table.get(bytes("k")).isTombstone()).isTrue();
	}

	@Test
	void iterationIsInKeyOrderWithTheKeptVersionsAndReadsSeeTheSame() {
		MemTable table = new MemTable();
		for (String key : List.of("b", "a", "d", "c", "a\u0000", "\u00ff")) {
			table.put(Entry.value(bytes(key), bytes(key + "-1"), 1));
		}
		table.put(Entry.value(bytes("c"), bytes("c-2"), 2));
		table.put(Entry.tombstone(bytes("d"), 2));
		List<String> all = new ArrayList<>();
		table.iterator()
			.forEachRemaining((e) -> all.add(new String(e.key(), StandardCharsets.UTF_8) + "="
					+ ((e.value() != null) ? new String(e.value(), StandardCharsets.UTF_8) : "deleted")));
		assertThat(all).containsExactly("a=a-1", "a\u0000=a\u0000-1", "b=b-1", "c=c-2", "d=deleted", "\u00ff=\u00ff-1");
		List<String> range = new ArrayList<>();
		table.iterator(bytes("b"), bytes("d"))
			.forEachRemaining((e) -> range.add(new String(e.key(), StandardCharsets.UTF_8)));
		assertThat(range).containsExactly("b", "c");
		assertThat(table.iterator(bytes("d"), bytes("b")).hasNext()).isFalse();
		assertThat(table.get(bytes("c")).value()).isEqualTo(bytes("c-2"));
		assertThat(table.get(bytes("absent"))).isNull();
		assertThat(table.count()).isEqualTo(6);
		assertThat(new MemTable().isEmpty()).isTrue();
	}

}
