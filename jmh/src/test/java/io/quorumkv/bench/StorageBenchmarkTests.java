package io.quorumkv.bench;

import java.nio.file.Files;
import java.nio.file.Path;

import io.quorumkv.storage.Entry;
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
	@ValueSource(strings = { "lsm", "rocksdb", "h2", "derby" })
	void everyBenchmarkDoesItsWork(String backend) throws Exception {
		StorageBenchmark benchmark = new StorageBenchmark();
		benchmark.backend = backend;
		benchmark.keys = KEYS;
		benchmark.open();
		Path golden = Dataset.root().resolve(backend + "-" + KEYS);
		try {
			assertThat(golden.resolve("prefill.done")).exists();

			Entry present = benchmark.getPresent();
			assertThat(present).isNotNull();
			assertThat(present.key()).hasSize(KeySpace.KEY_SIZE);
			assertThat(present.value()).hasSize(KeySpace.VALUE_SIZE);

			assertThat(benchmark.getAbsent()).isNull();

			assertThat(benchmark.scan1000(BLACKHOLE)).isEqualTo(StorageBenchmark.SCAN_LENGTH);

			Entry written = benchmark.put();
			assertThat(written.value()).hasSize(KeySpace.VALUE_SIZE);
			assertThat(written.timestamp()).isGreaterThan(Dataset.PREFILL_TIMESTAMP + KEYS);
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

	@ParameterizedTest
	@ValueSource(strings = { "lsm", "rocksdb", "h2", "derby" })
	void aPutIsReadBackAndTheAbsentTwinStaysAbsent(String backend) throws Exception {
		KeySpace keySpace = new KeySpace(KEYS);
		Path data = Dataset.checkout(Backend.of(backend), keySpace);
		try (var storage = Backend.of(backend).open(data)) {
			Entry newer = Entry.value(keySpace.present(7), keySpace.value(1), Long.MAX_VALUE / 2);
			storage.upsert(newer).block();
			assertThat(storage.get(keySpace.present(7)).block()).isEqualTo(newer);
			assertThat(storage.get(keySpace.absent(7)).block()).isNull();
			assertThat(storage.scan(keySpace.present(0), keySpace.present(10)).count().block()).isEqualTo(10);
		}
		finally {
			Dataset.delete(data);
		}
	}

}
