package io.quorumkv.storage.lsm.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.contract.Entries;
import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.iterator.EntryIterator;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tables written and read back: point lookups, seeks, metadata, reference counting. The
 * tables are random, from a seed printed on failure ({@link Seeds}).
 */
@ExtendWith(Seeds.class)
class SsTableTest {

	@TempDir
	Path dir;

	private static TreeMap<byte[], Entry> randomEntries(Random random, int count) {
		TreeMap<byte[], Entry> entries = new TreeMap<>(Keys.ORDER);
		while (entries.size() < count) {
			// Short keys over a small alphabet: long shared prefixes and prefix keys.
			byte[] key = new byte[1 + random.nextInt(12)];
			for (int i = 0; i < key.length; i++) {
				key[i] = (byte) (random.nextBoolean() ? 'a' : 0xF0 + random.nextInt(3));
			}
			long ts = random.nextLong();
			entries.put(key,
					(random.nextInt(5) == 0) ? Entry.tombstone(key, ts)
							: Entry.expiring(key, Entries.randomBytes(random, random.nextInt(600)), ts,
									random.nextBoolean() ? random.nextLong(Long.MAX_VALUE) : Entry.NO_EXPIRY));
		}
		return entries;
	}

	private SsTable write(TreeMap<byte[], Entry> entries, int blockSize) throws IOException {
		Path path = this.dir.resolve("000001.sst");
		Files.deleteIfExists(path);
		try (SsTableBuilder builder = SsTableBuilder.create(FileIo.real(), path, 1, blockSize, 10)) {
			for (Entry e : entries.values()) {
				builder.add(e);
			}
			return builder.finishAndOpen();
		}
	}

	/**
	 * A table large enough that its keys' hashes fill many of the builder's chunks and
	 * its index more than one {@link MetaBuffer} chunk: the filter built in native memory
	 * is byte for byte the filter built on the heap from the same keys, and every key is
	 * found through the index.
	 */
	@Test
	void aLargeTableWritesTheSameFilterAsAHeapFilterAndFindsEveryKey() throws IOException {
		TreeMap<byte[], Entry> entries = new TreeMap<>(Keys.ORDER);
		BloomFilter heap = BloomFilter.create(100_000, 10);
		for (int i = 0; i < 100_000; i++) {
			byte[] key = String.format("key-%08d", i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
			entries.put(key, Entry.value(key, new byte[100], i));
			heap.add(key);
		}
		SsTable table = write(entries, 4096);
		try {
			byte[] file = Files.readAllBytes(this.dir.resolve("000001.sst"));
			Footer footer = Footer.decode(
					java.util.Arrays.copyOfRange(file, file.length - Footer.ENCODED_SIZE, file.length), file.length);
			assertThat(footer.index().size()).as("index bytes").isGreaterThan(MetaBuffer.CHUNK);
			byte[] written = java.util.Arrays.copyOfRange(file, (int) footer.bloom().offset(),
					(int) footer.bloom().offset() + footer.bloom().size());
			assertThat(written).isEqualTo(heap.encode());
			for (Entry e : entries.values()) {
				assertThat(table.find(e.key())).isEqualTo(e);
			}
		}
		finally {
			table.release();
		}
	}

	@RepeatedTest(5)
	void randomTablesAnswerLookupsAndSeeks(Random random) throws IOException {
		TreeMap<byte[], Entry> entries = randomEntries(random, 500 + random.nextInt(1500));
		SsTable table = write(entries, 256 + random.nextInt(2048));
		try {
			for (Entry e : entries.values()) {
				assertThat(table.mayContain(e.key())).isTrue();
				assertThat(table.find(e.key())).isEqualTo(e);
			}
			for (int i = 0; i < 200; i++) {
				byte[] probe = Entries.randomBytes(random, 1 + random.nextInt(6));
				assertThat(table.find(probe)).isEqualTo(entries.get(probe));
				List<Entry> seen = new ArrayList<>();
				EntryIterator it = table.iterator(probe);
				for (Entry e = it.current(); e != null && seen.size() < 50; it.next(), e = it.current()) {
					seen.add(e);
				}
				assertThat(seen)
					.containsExactlyElementsOf(entries.tailMap(probe, true).values().stream().limit(50).toList());
			}
			TableProperties properties = table.properties();
			assertThat(properties.minKey()).isEqualTo(entries.firstKey());
			assertThat(properties.maxKey()).isEqualTo(entries.lastKey());
			assertThat(properties.entryCount()).isEqualTo(entries.size());
			assertThat(table.maxTimestamp())
				.isEqualTo(entries.values().stream().mapToLong(Entry::timestamp).max().orElseThrow());
			assertThat(properties.minTimestamp())
				.isEqualTo(entries.values().stream().mapToLong(Entry::timestamp).min().orElseThrow());
		}
		finally {
			table.release();
		}
	}

	@Test
	void lastReleaseOfAnObsoleteTableUnmapsAndDeletesIt(Random random) throws IOException {
		SsTable table = write(randomEntries(random, 100), 512);
		assertThat(table.tryRetain()).isTrue();
		table.markObsolete();
		table.release();
		assertThat(table.path()).exists();
		table.release();
		assertThat(table.path()).doesNotExist();
		assertThat(table.tryRetain()).as("a released table is never pinned again").isFalse();
	}

}
