package io.quorumkv.bench.report;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class JmhJsonParserTests {

	@Test
	void readsBenchmarksScoresAndParams() {
		List<JmhResult> results = JmhJsonParser.parse(Samples.read("jmh/storage-sample.json"));
		assertThat(results).hasSize(2);
		JmhResult put = results.getFirst();
		assertThat(put.benchmark()).isEqualTo("io.quorumkv.bench.StorageBenchmark.put");
		assertThat(put.shortName()).isEqualTo("StorageBenchmark.put");
		assertThat(put.mode()).isEqualTo("thrpt");
		assertThat(put.params()).containsEntry("backend", "h2").containsEntry("valueSize", "100");
		assertThat(put.score()).isEqualTo(41234.567);
		assertThat(put.scoreError()).isEqualTo(1523.25);
		assertThat(put.unit()).isEqualTo("ops/s");
	}

	@Test
	void readsANaNErrorAndNoParams() {
		JmhResult placement = JmhJsonParser.parse(Samples.read("jmh/storage-sample.json")).get(1);
		assertThat(placement.mode()).isEqualTo("avgt");
		assertThat(placement.params()).isEmpty();
		assertThat(placement.score()).isEqualTo(87.25);
		assertThat(placement.scoreError()).isNaN();
		assertThat(placement.unit()).isEqualTo("ns/op");
	}

	@Test
	void readsARealJmhRun() {
		// java -jar jmh/target/benchmarks.jar WrkOutputParserBenchmark -f 1 -wi 1 -i 2 -w
		// 1s -r 1s -rf json
		List<JmhResult> results = JmhJsonParser.parse(Samples.read("jmh/parser-benchmark-real.json"));
		assertThat(results).singleElement().satisfies((result) -> {
			assertThat(result.shortName()).isEqualTo("WrkOutputParserBenchmark.parseWrk2Output");
			assertThat(result.mode()).isEqualTo("avgt");
			assertThat(result.forks()).isEqualTo(1);
			assertThat(result.score()).isEqualTo(294.1950920371985);
			assertThat(result.scoreError()).isNaN();
			assertThat(result.unit()).isEqualTo("us/op");
		});
	}

	@Test
	void rejectsWhatIsNotAResultArray() {
		assertThatIllegalArgumentException().isThrownBy(() -> JmhJsonParser.parse("{\"benchmark\":\"x\"}"));
		assertThatIllegalArgumentException().isThrownBy(() -> JmhJsonParser.parse("[{\"mode\":\"thrpt\"}]"));
	}

}
