package io.quorumkv.bench.report;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StorageComparisonTests {

	@Test
	void ratiosAreToTheComparingPutWhereMeasuredAndWideErrorsAreFlagged() {
		List<JmhResult> results = List.of(result("put", "lsm", 200_000, 10_000),
				result("put", "rocksdb", 400_000, 20_000), result("put", "rocksdb-lww", 100_000, 30_000),
				result("getPresent", "lsm", 900_000, 9_000), result("getPresent", "rocksdb", 300_000, 3_000),
				new JmhResult("io.quorumkv.bench.PlacementBenchmark.replicas", "thrpt", 1, 1, Map.of(), 1, 0, "ops/s"));

		String table = StorageComparison.table(results);

		assertThat(table.lines().toList()).hasSize(4);
		assertThat(table).contains("| 100,000 | `put` | 200,000 ± 5% | 400,000 ± 5% | 100,000 ± 30% "
				+ "| 2.00× (to compare) | **yes**: compare |");
		assertThat(table).contains("| 100,000 | `getPresent` | 900,000 ± 1% | 300,000 ± 1% | – | 3.00× | no |");
		assertThat(table.indexOf("`put`")).isLessThan(table.indexOf("`getPresent`"));
	}

	private static JmhResult result(String method, String backend, double score, double error) {
		return new JmhResult("io.quorumkv.bench.StorageBenchmark." + method, "thrpt", 2, 3,
				Map.of("backend", backend, "keys", "100000"), score, error, "ops/s");
	}

}
