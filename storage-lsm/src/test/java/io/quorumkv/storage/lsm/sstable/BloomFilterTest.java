package io.quorumkv.storage.lsm.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class BloomFilterTest {

	private static byte[] key(String prefix, int i) {
		return (prefix + i).getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void hasNoFalseNegativesAndAboutOnePercentFalsePositivesAtTenBitsPerKey() {
		int keys = 100_000;
		BloomFilter filter = BloomFilter.create(keys, 10);
		for (int i = 0; i < keys; i++) {
			filter.add(key("present-", i));
		}
		for (int i = 0; i < keys; i++) {
			assertThat(filter.mayContain(key("present-", i))).isTrue();
		}
		int falsePositives = 0;
		for (int i = 0; i < keys; i++) {
			falsePositives += filter.mayContain(key("absent-", i)) ? 1 : 0;
		}
		double rate = falsePositives / (double) keys;
		// Theory for 10 bits/key and 7 probes: 0.82%.
		assertThat(rate).as("false-positive rate").isBetween(0.004, 0.015);
	}

	@Test
	void encodesAndDecodes() {
		BloomFilter filter = BloomFilter.create(1_000, 10);
		for (int i = 0; i < 1_000; i++) {
			filter.add(key("k", i));
		}
		BloomFilter decoded = BloomFilter.decode(filter.encode());
		assertThat(decoded).isNotNull();
		for (int i = 0; i < 1_000; i++) {
			assertThat(decoded.mayContain(key("k", i))).isTrue();
		}
		for (int i = 0; i < 2_000; i++) {
			assertThat(decoded.mayContain(key("x", i))).isEqualTo(filter.mayContain(key("x", i)));
		}
	}

	@Test
	void rejectsInconsistentEncoding() {
		byte[] encoded = BloomFilter.create(100, 10).encode();
		assertThat(BloomFilter.decode(java.util.Arrays.copyOf(encoded, encoded.length - 1))).isNull();
		assertThat(BloomFilter.decode(new byte[3])).isNull();
	}

}
