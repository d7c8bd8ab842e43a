package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.StorageStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine's block cache across table lifetimes: hundreds of flush-and-compact cycles
 * with reads between them leave no block of a dropped table in the cache and no native
 * block memory unaccounted for.
 */
class BlockCacheEngineTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final int CYCLES = 300;

	private static final int KEYS = 400;

	@TempDir
	Path dir;

	static byte[] key(int i) {
		return String.format("key-%05d", i).getBytes(StandardCharsets.UTF_8);
	}

	static byte[] value(int i, int cycle) {
		return ("{\"id\":" + i + ",\"cycle\":" + cycle + ",\"text\":\"a compressible value, a compressible value\"}")
			.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void droppedTablesLeaveNoBlocksInTheCacheAndNoNativeMemory() throws Exception {
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
					storage.upsert(Entry.value(key(i), value(i, cycle), cycle + 1L)).block(TIMEOUT);
				}
				storage.forceFlush().get(30, TimeUnit.SECONDS);
				if (cycle % 3 == 2) {
					storage.compact().block(TIMEOUT);
				}
				for (int i = 0; i < KEYS; i += 3) {
					assertThat(storage.get(key(i)).block(TIMEOUT)).isNotNull();
				}
			}
			StorageStats stats = storage.stats();
			Map<String, Long> gauges = stats.gauges();
			System.out.printf("after %d cycles: %s hits, %s misses, cache %s bytes, live raw data %s bytes%n", CYCLES,
					stats.counters().get("block.cache.hits"), stats.counters().get("block.cache.misses"),
					gauges.get("block.cache.bytes"), gauges.get("tables.data.raw.bytes"));
			assertThat(stats.counters().get("block.cache.hits")).isPositive();
			assertThat(gauges.get("block.cache.bytes")).as("only live tables' blocks")
				.isPositive()
				.isLessThanOrEqualTo(gauges.get("tables.data.raw.bytes"));
			assertThat(gauges.get("block.cache.allocated.bytes")).as("nothing pinned or leaked")
				.isEqualTo(gauges.get("block.cache.bytes"));
		}
	}

}
