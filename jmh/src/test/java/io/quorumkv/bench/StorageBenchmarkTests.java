package io.quorumkv.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.openjdk.jmh.infra.Blackhole;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every benchmark method once per backend on a tiny prefilled store, checking that
 * each one does the work it claims (a benchmark that measures an empty answer measures
 * nothing).
 */
class StorageBenchmarkTests {

	private static final int KEYS = 2_000;

	private static final Blackhole BLACKHOLE = new Blackhole(
			"Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");

	@ParameterizedTest
	@ValueSource(strings = { "lsm", "rocksdb", "rocksdb-lww", "h2", "derby" })
	void everyBenchmarkDoesItsWork(String backend) throws Exception {
		StorageBenchmark benchmark = new StorageBenchmark();
		benchmark.backend = backend;
		benchmark.keys = KEYS;
		benchmark.open();
		Path golden = Dataset.root().resolve(Backend.of(backend).dataset().id() + "-" + KEYS);
		try {
			assertThat(golden.resolve("prefill.done")).exists();

			Entry present = benchmark.getPresent();
			assertThat(present).isNotNull();
			assertThat(present.key()).hasSize(KeySpace.KEY_SIZE);
			assertThat(present.value()).hasSize(KeySpace.VALUE_SIZE);

			assertThat(benchmark.getAbsent()).isNull();
			KeySpace keySpace = new KeySpace(KEYS);
			assertThat(benchmark.storage().get(keySpace.absent(KEYS - 1)).block()).isNull();
			assertThat(benchmark.storage().get(keySpace.present(KEYS - 1)).block()).isNotNull();

			assertThat(benchmark.scan1000(BLACKHOLE)).isEqualTo(StorageBenchmark.SCAN_LENGTH);

			Entry written = benchmark.put();
			assertThat(written.value()).hasSize(KeySpace.VALUE_SIZE);
			assertThat(written.timestamp()).isGreaterThan(Dataset.PREFILL_TIMESTAMP + KEYS);
			assertThat(benchmark.storage().get(written.key()).block()).isEqualTo(written);

			// A key drawn twice in one list keeps its newer (later) entry.
			Map<String, Entry> newest = new HashMap<>();
			for (Entry listed : benchmark.putList32()) {
				newest.merge(new String(listed.key(), StandardCharsets.US_ASCII), listed, EntryOrder::max);
			}
			for (Entry listed : newest.values()) {
				assertThat(benchmark.storage().get(listed.key()).block()).isEqualTo(listed);
			}
		}
		finally {
			benchmark.close();
		}
		// The trial's copy is gone, the prefilled store stays for the next trial.
		try (var children = Files.list(Dataset.root())) {
			assertThat(children.map((p) -> p.getFileName().toString()))
				.noneMatch((n) -> n.startsWith("run-" + backend));
		}
		assertThat(golden.resolve("data")).isDirectory();
	}

}
