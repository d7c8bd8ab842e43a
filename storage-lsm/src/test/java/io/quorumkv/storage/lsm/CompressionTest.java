package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The compression setting of a node changes between restarts: tables written under each
 * setting stay readable side by side, a compaction rewrites them under the current one,
 * and the stats show what compression saved.
 */
class CompressionTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	private LsmStorage open(Compression compression) {
		return LsmStorage.open(LsmOptions.defaults(this.dir)
			.withFsync(FsyncPolicy.NEVER)
			.withCompaction(100, 256L << 20, 10, 64L << 20)
			.withCompression(compression));
	}

	private static Entry document(int i) {
		byte[] key = String.format("doc:%06d", i).getBytes(StandardCharsets.UTF_8);
		String json = "{\"id\":" + i + ",\"title\":\"document " + i + "\",\"tags\":[\"a\",\"b\",\"c\"],\"body\":\""
				+ "lorem ipsum dolor sit amet ".repeat(1 + i % 5) + "\"}";
		return Entry.value(key, json.getBytes(StandardCharsets.UTF_8), i + 1);
	}

	private static Map<String, Long> gauges(LsmStorage storage) {
		return storage.stats().gauges();
	}

	@Test
	void tablesOfEverySettingReadSideBySideAndACompactionRewritesThemUnderTheLast() throws Exception {
		List<Entry> written = new ArrayList<>();
		Compression[] settings = { Compression.NONE, Compression.LZ4, Compression.ZSTD };
		for (int round = 0; round < settings.length; round++) {
			try (LsmStorage storage = open(settings[round])) {
				for (int i = round * 500; i < (round + 1) * 500; i++) {
					storage.upsert(document(i)).block(TIMEOUT);
					written.add(document(i));
				}
				storage.forceFlush().get(30, TimeUnit.SECONDS);
				assertThat(storage.scan(new byte[] { 'd' }, null).collectList().block(TIMEOUT))
					.containsExactlyElementsOf(written);
			}
		}
		try (LsmStorage storage = open(Compression.ZSTD)) {
			assertThat(gauges(storage)).containsEntry("tables.codec.none", 1L)
				.containsEntry("tables.codec.lz4", 1L)
				.containsEntry("tables.codec.zstd", 1L);
			for (Entry e : written) {
				assertThat(storage.get(e.key()).block(TIMEOUT)).isEqualTo(e);
			}
			storage.forceCompaction().get(30, TimeUnit.SECONDS);
			assertThat(gauges(storage)).containsEntry("tables.codec.none", 0L)
				.containsEntry("tables.codec.lz4", 0L)
				.containsEntry("tables.codec.zstd", 1L);
			assertThat(storage.scan(new byte[] { 'd' }, null).collectList().block(TIMEOUT))
				.containsExactlyElementsOf(written);
			long raw = gauges(storage).get("tables.data.raw.bytes");
			long stored = gauges(storage).get("tables.data.stored.bytes");
			assertThat(stored).as("zstd on JSON documents").isLessThan(raw / 3);
		}
	}

}
