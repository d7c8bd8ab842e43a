package io.quorumkv.bench.report;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Charts from a raw folder laid out like scripts/ycsb-report.sh writes it. */
class YcsbChartsTests {

	@TempDir
	Path raw;

	@Test
	void throughputPerWorkloadAndTargetLeavesMissingRunsOut() throws Exception {
		summary("qkv-lsm/a-closed", "[OVERALL], Throughput(ops/sec), 3253.4", "[READ], Operations, 10");
		summary("etcd/a-closed", "[OVERALL], Throughput(ops/sec), 1909.0");
		summary("qkv-lsm/e-closed", "[OVERALL], Throughput(ops/sec), 40.5");
		Map<String, Map<String, Double>> values = YcsbCharts.throughput(this.raw,
				List.of("qkv-lsm", "cassandra", "etcd"), List.of("a", "c", "e"));
		assertThat(values).containsOnlyKeys("A", "E");
		assertThat(values.get("A")).containsExactly(Map.entry("qkv-lsm", 3253.4), Map.entry("etcd", 1909.0));
		assertThat(values.get("E")).containsExactly(Map.entry("qkv-lsm", 40.5));
	}

	@Test
	void p99IsTheIntendedLatencyInMillisecondsPerOperation() throws Exception {
		summary("qkv-lsm/a-rate", "[READ], 99thPercentileLatency(us), 999",
				"[Intended-READ], 99thPercentileLatency(us), 2500",
				"[Intended-UPDATE], 99thPercentileLatency(us), 4100");
		summary("cassandra/a-rate", "[Intended-READ], 99thPercentileLatency(us), 12000");
		Map<String, Map<String, Double>> values = YcsbCharts.p99(this.raw, List.of("qkv-lsm", "cassandra"),
				List.of("a"));
		assertThat(values.keySet()).containsExactly("A read", "A update");
		assertThat(values.get("A read")).containsExactly(Map.entry("qkv-lsm", 2.5), Map.entry("cassandra", 12.0));
		assertThat(values.get("A update")).containsExactly(Map.entry("qkv-lsm", 4.1));
	}

	@Test
	void writesBothChartsAsSvgWithTheTargetsInTheLegend() throws Exception {
		summary("qkv-lsm/c-closed", "[OVERALL], Throughput(ops/sec), 5038");
		summary("etcd/c-closed", "[OVERALL], Throughput(ops/sec), 5329");
		summary("qkv-lsm/c-rate", "[Intended-READ], 99thPercentileLatency(us), 3100");
		Path out = this.raw.resolve("report");
		List<Path> written = YcsbCharts.write(this.raw, out, List.of("qkv-lsm", "etcd"), List.of("c"));
		assertThat(written).containsExactly(out.resolve("ycsb-throughput.svg"), out.resolve("ycsb-p99.svg"));
		String throughput = Files.readString(written.get(0));
		assertThat(throughput).startsWith("<?xml").contains("<svg").contains("qkv-lsm").contains("etcd");
		assertThat(Files.readString(written.get(1))).contains("<svg").contains("C read");
	}

	@Test
	void aSummaryLineThatIsNotANumberIsAnError() throws Exception {
		summary("qkv-lsm/a-closed", "[OVERALL], Throughput(ops/sec), lots");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> YcsbCharts.throughput(this.raw, List.of("qkv-lsm"), List.of("a")))
			.withMessageContaining("not a number");
	}

	private void summary(String run, String... lines) throws Exception {
		Path folder = Files.createDirectories(this.raw.resolve(run));
		Files.writeString(folder.resolve("run.txt"), String.join("\n", lines) + "\n");
	}

}
