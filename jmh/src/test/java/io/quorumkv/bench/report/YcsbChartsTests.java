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
	void p99IsTheIntendedLatencyInMillisecondsPerOperationAfterTheSettleTime() throws Exception {
		hdr("qkv-lsm/a-rate", "READ", 999);
		hdr("qkv-lsm/a-rate", "Intended-READ", 2500);
		hdr("qkv-lsm/a-rate", "Intended-UPDATE", 4100);
		hdr("cassandra/a-rate", "Intended-READ", 12000);
		Map<String, Map<String, Double>> values = YcsbCharts.p99(this.raw, List.of("qkv-lsm", "cassandra"),
				List.of("a"), 10);
		assertThat(values.keySet()).containsExactly("A read", "A update");
		assertThat(values.get("A read")).hasEntrySatisfying("qkv-lsm", (ms) -> assertThat(ms).isBetween(2.49, 2.51))
			.hasEntrySatisfying("cassandra", (ms) -> assertThat(ms).isBetween(11.9, 12.1))
			.hasSize(2);
		assertThat(values.get("A update")).containsOnlyKeys("qkv-lsm");
		assertThat(values.get("A update").get("qkv-lsm")).isBetween(4.09, 4.11);
	}

	@Test
	void writesBothChartsAsSvgWithTheTargetsInTheLegend() throws Exception {
		summary("qkv-lsm/c-closed", "[OVERALL], Throughput(ops/sec), 5038");
		summary("etcd/c-closed", "[OVERALL], Throughput(ops/sec), 5329");
		hdr("qkv-lsm/c-rate", "Intended-READ", 3100);
		Path out = this.raw.resolve("report");
		List<Path> written = YcsbCharts.write(this.raw, out, List.of("qkv-lsm", "etcd"), List.of("c"), 10);
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

	/**
	 * A run's HdrHistogram log of one series as YCSB writes it: 5 s intervals over 20 s,
	 * the first at 800 ms (a fresh client's start), the others at {@code micros}.
	 */
	private void hdr(String run, String series, long micros) throws Exception {
		Path folder = Files.createDirectories(this.raw.resolve(run));
		YcsbLatencyTests.writeLog(folder.resolve("run-" + series + ".hdr"), 0,
				YcsbLatencyTests.interval(0, 800_000, 100), YcsbLatencyTests.interval(5_000, micros, 1_000),
				YcsbLatencyTests.interval(10_000, micros, 1_000), YcsbLatencyTests.interval(15_000, micros, 1_000));
	}

	private void summary(String run, String... lines) throws Exception {
		Path folder = Files.createDirectories(this.raw.resolve(run));
		Files.writeString(folder.resolve("run.txt"), String.join("\n", lines) + "\n");
	}

}
