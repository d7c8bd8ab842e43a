package io.quorumkv.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Runs every compression benchmark once per codec on a small prefilled store: each reads
 * from compacted tables of its codec and does the work it claims; the value mix
 * compresses as described.
 */
class CompressionBenchmarkTests {

	private static final int KEYS = 3_000;

	private static final Blackhole BLACKHOLE = new Blackhole(
			"Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");

	@ParameterizedTest
	@ValueSource(strings = { "none", "lz4", "zstd" })
	void everyBenchmarkDoesItsWork(String compression) throws Exception {
		CompressionBenchmark benchmark = new CompressionBenchmark();
		benchmark.compression = compression;
		benchmark.keys = KEYS;
		benchmark.open();
		try {
			Entry present = benchmark.getPresent();
			assertThat(present).isNotNull();
			assertThat(present.value()).isNotEmpty();
			assertThat(benchmark.scan1000(BLACKHOLE)).isEqualTo(CompressionBenchmark.SCAN_LENGTH);
			Entry written = benchmark.put();
			assertThat(written.timestamp()).isGreaterThan(1_000_000L + KEYS);
		}
		finally {
			benchmark.close();
		}
	}

	@org.junit.jupiter.api.Test
	void theValueMixIsHalfDocumentsAThirdTextAndTheRestRandomBytes() {
		int json = 0;
		int text = 0;
		long bytes = 0;
		for (int i = 0; i < 10_000; i++) {
			byte[] value = ValueMix.value(7, i);
			bytes += value.length;
			String start = new String(value, 0, Math.min(5, value.length), StandardCharsets.ISO_8859_1);
			json += start.startsWith("{\"id\"") ? 1 : 0;
			text += start.startsWith("2026-") ? 1 : 0;
		}
		assertThat(json).isBetween(4_700, 5_300);
		assertThat(text).isBetween(2_700, 3_300);
		assertThat(bytes / 10_000).isBetween(450L, 650L);
		assertThat(ValueMix.value(7, 42)).isEqualTo(ValueMix.value(7, 42));
	}

}
