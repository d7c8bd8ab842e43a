package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.ObjectName;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A thousand flush-and-compact cycles leave no native memory behind: each table maps its
 * file and copies its filter and index into an arena of its own, freed when a compaction
 * drops the table; the block cache mallocs its blocks. Counted by the JVM, not by the
 * engine: the native memory tracker's "Other" category (where arenas allocate; the
 * module's tests run with {@code -XX:NativeMemoryTracking=summary}) and the mapped buffer
 * pool (one mapping per open table).
 */
class NativeMemoryLeakTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final int CYCLES = 1_000;

	private static final int KEYS = 400;

	private static final Pattern OTHER = Pattern.compile("malloc=(\\d+)KB tag=Other #(\\d+)");

	@TempDir
	Path dir;

	/** Native memory of the "Other" category in KiB and its allocations, [KiB, count]. */
	private static long[] other() throws Exception {
		String summary = (String) ManagementFactory.getPlatformMBeanServer()
			.invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
					new Object[] { new String[] { "summary" } }, new String[] { String[].class.getName() });
		Matcher matcher = OTHER.matcher(summary);
		assertThat(matcher.find())
			.as("the native memory tracker's summary (run with -XX:NativeMemoryTracking=summary,"
					+ " as the module's surefire configuration does):%n%s", summary)
			.isTrue();
		return new long[] { Long.parseLong(matcher.group(1)), Long.parseLong(matcher.group(2)) };
	}

	private static BufferPoolMXBean mapped() {
		return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)
			.stream()
			.filter((pool) -> pool.getName().equals("mapped"))
			.findFirst()
			.orElseThrow();
	}

	@Test
	void aThousandFlushAndCompactCyclesLeaveNoNativeMemory() throws Exception {
		long[] before = other();
		long mappedBefore = mapped().getCount();
		long[] warm = null;
		long[] end;
		long tables;
		LsmOptions options = LsmOptions.defaults(this.dir)
			.withFsync(FsyncPolicy.NEVER)
			.withBlockSize(512)
			.withCompression(Compression.LZ4)
			.withBlockCacheSize(64L << 20);
		try (LsmStorage storage = LsmStorage.open(options)) {
			for (int cycle = 0; cycle < CYCLES; cycle++) {
				// Every key first, then a quarter of them per cycle.
				int step = (cycle == 0) ? 1 : 4;
				for (int i = cycle % step; i < KEYS; i += step) {
					storage
						.upsert(Entry.value(BlockCacheEngineTest.key(i), BlockCacheEngineTest.value(i, cycle),
								cycle + 1L))
						.block(TIMEOUT);
				}
				storage.forceFlush().get(30, TimeUnit.SECONDS);
				storage.forceCompaction().get(30, TimeUnit.SECONDS);
				for (int i = 0; i < KEYS; i += 3) {
					assertThat(storage.get(BlockCacheEngineTest.key(i)).block(TIMEOUT)).isNotNull();
				}
				if (cycle == 99) {
					warm = other();
				}
			}
			end = other();
			Map<String, Long> gauges = storage.stats().gauges();
			tables = gauges.get("tables");
			System.out.printf(
					"native memory tracker, Other: before %s KiB (%d allocations), after 100 cycles %s KiB (%d), after %d cycles %s KiB (%d); mapped %d before, %d with %d tables open; block cache %s bytes, %s allocated%n",
					before[0], before[1], warm[0], warm[1], CYCLES, end[0], end[1], mappedBefore, mapped().getCount(),
					tables, gauges.get("block.cache.bytes"), gauges.get("block.cache.allocated.bytes"));
			// A table's arena holds three allocations (filter, index, the index's entry
			// positions): 900 tables leaked would be 2,700. The slack is the JVM's own.
			assertThat(end[1] - warm[1]).as("native allocations over the last 900 cycles").isLessThanOrEqualTo(8);
			assertThat(end[0] - warm[0]).as("native KiB over the last 900 cycles").isLessThanOrEqualTo(16);
			assertThat(mapped().getCount() - mappedBefore).as("one mapping per open table").isEqualTo(tables);
			assertThat(gauges.get("block.cache.allocated.bytes")).as("no cached block pinned or leaked")
				.isEqualTo(gauges.get("block.cache.bytes"));
		}
		long[] closed = other();
		System.out.printf("after close: Other %s KiB (%d allocations), mapped %d%n", closed[0], closed[1],
				mapped().getCount());
		assertThat(mapped().getCount()).as("every mapping unmapped").isEqualTo(mappedBefore);
		assertThat(closed[1] - before[1]).as("native allocations left after close").isLessThanOrEqualTo(8);
		assertThat(closed[0] - before[0]).as("native KiB left after close").isLessThanOrEqualTo(16);
	}

}
