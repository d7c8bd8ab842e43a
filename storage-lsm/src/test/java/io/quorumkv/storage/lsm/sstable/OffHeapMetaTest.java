package io.quorumkv.storage.lsm.sstable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import javax.management.ObjectName;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bloom filter and block index live off the Java heap: a table's retained heap does
 * not grow with its keys; both answer as the on-heap decoding of the same bytes did; a
 * damaged byte of either is reported with the file and the block's offset.
 */
@ExtendWith(Seeds.class)
class OffHeapMetaTest {

	private static final int OPENS = 40;

	@TempDir
	Path dir;

	private Path write(String name, int keys, int blockSize) throws IOException {
		Path path = this.dir.resolve(name);
		try (SsTableBuilder builder = SsTableBuilder.create(FileIo.real(), path, 1, blockSize, 10)) {
			for (int i = 0; i < keys; i++) {
				builder.add(Entry.value(key(i), new byte[16], i));
			}
			builder.finish();
		}
		return path;
	}

	private static byte[] key(int i) {
		return String.format("key-%09d", i).getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Bytes of Java arrays held per open table, from live class histograms (each forces a
	 * full collection) before and after opening the file {@link #OPENS} times. Arrays
	 * count everything that grows with a table: its filter words, its keys, its handles'
	 * arrays.
	 */
	private static long arrayBytesPerTable(Path path) throws Exception {
		List<SsTable> open = new ArrayList<>();
		long before = liveArrayBytes();
		try {
			for (int i = 0; i < OPENS; i++) {
				open.add(SsTable.open(FileIo.real(), path, i + 1));
			}
			long after = liveArrayBytes();
			return (after - before) / OPENS;
		}
		finally {
			open.forEach(SsTable::release);
		}
	}

	private static long liveArrayBytes() throws Exception {
		String histogram = (String) ManagementFactory.getPlatformMBeanServer()
			.invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
					new Object[] { new String[0] }, new String[] { String[].class.getName() });
		long bytes = 0;
		for (String line : histogram.split("\n")) {
			String[] fields = line.trim().split("\\s+");
			if (fields.length >= 4 && fields[0].endsWith(":") && fields[3].startsWith("[")) {
				bytes += Long.parseLong(fields[2]);
			}
		}
		return bytes;
	}

	@Test
	void heapPerTableIsConstantInTheNumberOfKeys() throws Exception {
		Path small = write("000001.sst", 1_000, 4096);
		Path large = write("000002.sst", 100_000, 4096);
		long smallBytes = arrayBytesPerTable(small);
		long largeBytes = arrayBytesPerTable(large);
		System.out.printf("array bytes per open table: 1,000 keys %d, 100,000 keys %d%n", smallBytes, largeBytes);
		// On the heap, 100,000 keys cost ~125 KB of filter words and ~60 KB of index
		// keys.
		assertThat(largeBytes).as("array bytes per table of 100,000 keys").isLessThan(1024);
		assertThat(largeBytes - smallBytes).as("growth from 1,000 to 100,000 keys").isLessThan(256);
	}

	/** The index and filter answer as the on-heap decoding of the same blocks. */
	@Test
	void answersAsTheOnHeapDecoding(Random random) throws IOException {
		int keys = 20_000;
		Path path = write("000001.sst", keys, 512);
		byte[] file = Files.readAllBytes(path);
		Footer footer = Footer
			.decode(java.util.Arrays.copyOfRange(file, file.length - Footer.ENCODED_SIZE, file.length), file.length);
		ByteBuffer index = ByteBuffer.wrap(file, (int) footer.index().offset(), footer.index().size());
		int count = index.getInt();
		byte[][] lastKeys = new byte[count][];
		long[] offsets = new long[count];
		for (int i = 0; i < count; i++) {
			lastKeys[i] = new byte[index.getInt()];
			index.get(lastKeys[i]);
			offsets[i] = index.getLong();
			index.getInt();
		}
		BloomFilter heapBloom = BloomFilter.decode(java.util.Arrays.copyOfRange(file, (int) footer.bloom().offset(),
				(int) footer.bloom().offset() + footer.bloom().size()));
		assertThat(heapBloom).isNotNull();
		SsTable table = SsTable.open(FileIo.real(), path, 1);
		try {
			assertThat(table.blockCount()).isEqualTo(count);
			for (int i = 0; i < count; i++) {
				assertThat(table.blockHandle(i).offset()).isEqualTo(offsets[i]);
			}
			for (int probe = 0; probe < 20_000; probe++) {
				byte[] key = (random.nextBoolean()) ? key(random.nextInt(keys + 100))
						: ("key-" + random.nextInt(1_000_000)).getBytes(StandardCharsets.UTF_8);
				int expected = java.util.Arrays.binarySearch(lastKeys, key, Keys.ORDER);
				expected = (expected >= 0) ? expected : -expected - 1;
				assertThat(table.blockIndexFor(key)).as("block of %s", new String(key, StandardCharsets.UTF_8))
					.isEqualTo(expected);
				assertThat(table.mayContain(key)).isEqualTo(heapBloom.mayContain(key));
			}
		}
		finally {
			table.release();
		}
	}

	/**
	 * Every byte of the bloom and index blocks and of their trailers, flipped in turn, is
	 * refused on open naming the file and the block's offset.
	 */
	@Test
	void aFlippedByteOfTheFilterOrIndexIsReportedWithFileAndOffset() throws IOException {
		Path path = write("000001.sst", 150, 256);
		byte[] intact = Files.readAllBytes(path);
		Footer footer = Footer.decode(
				java.util.Arrays.copyOfRange(intact, intact.length - Footer.ENCODED_SIZE, intact.length),
				intact.length);
		Path damaged = this.dir.resolve("000002.sst");
		int flipped = 0;
		for (BlockHandle handle : List.of(footer.bloom(), footer.index())) {
			long end = handle.end(TableFormat.CURRENT);
			for (long at = handle.offset(); at < end; at++) {
				byte[] copy = intact.clone();
				copy[(int) at] ^= 0x10;
				Files.write(damaged, copy);
				assertThatThrownBy(() -> SsTable.open(FileIo.real(), damaged, 2).release()).as("byte %d flipped", at)
					.isInstanceOfSatisfying(CorruptedStorageException.class, (ex) -> {
						assertThat(ex.file()).isEqualTo(damaged);
						assertThat(ex.offset()).isEqualTo(handle.offset());
					});
				flipped++;
			}
		}
		assertThat(flipped).isGreaterThan(300);
	}

}
