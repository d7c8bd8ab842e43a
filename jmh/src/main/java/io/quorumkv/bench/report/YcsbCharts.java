package io.quorumkv.bench.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * Draws the charts of the YCSB report from the raw outputs {@code scripts/ycsb-report.sh}
 * leaves ({@code RAW/<target>/<workload>-closed/run.txt}, YCSB's text summary, and
 * {@code -rate/run-Intended-<OPERATION>.hdr}, its HdrHistogram logs):
 * {@code ycsb-throughput.svg}, the closed-loop throughput of each target per workload,
 * and {@code ycsb-p99.svg}, the intended p99 latency of each operation at the fixed rate
 * after the run's first {@code SETTLE} seconds ({@link YcsbLatency}). Both on log scales,
 * as the workloads' figures span decades (scans run at a hundredth of the rate of reads).
 * A run that is missing is left out of the chart.
 *
 * <pre>
 * java -cp jmh/target/benchmarks.jar io.quorumkv.bench.report.YcsbCharts RAW OUT "targets" "workloads" SETTLE
 * </pre>
 */
public final class YcsbCharts {

	/** YCSB's operations, in the order the charts show them. */
	private static final List<String> OPERATIONS = List.of("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE");

	private YcsbCharts() {
	}

	public static void main(String[] args) throws IOException {
		if (args.length != 5) {
			System.err.println("usage: YcsbCharts RAW OUT \"targets\" \"workloads\" SETTLE_SECONDS");
			System.exit(2);
		}
		List<Path> written = write(Path.of(args[0]), Path.of(args[1]), words(args[2]), words(args[3]),
				Double.parseDouble(args[4]));
		written.forEach((path) -> System.out.println("chart: " + path));
	}

	/** Writes both charts into {@code out}; the files written. */
	static List<Path> write(Path raw, Path out, List<String> targets, List<String> workloads, double settleSeconds)
			throws IOException {
		Files.createDirectories(out);
		Path throughputFile = out.resolve("ycsb-throughput.svg");
		Files.writeString(throughputFile, Charts.groupedBars("Closed loop: throughput per workload", "workload",
				"operations/s", throughput(raw, targets, workloads), true), StandardCharsets.UTF_8);
		Path latencyFile = out.resolve("ycsb-p99.svg");
		Files.writeString(latencyFile, Charts.groupedBars("At the fixed rate: intended p99 latency",
				"workload, operation", "ms", p99(raw, targets, workloads, settleSeconds), true),
				StandardCharsets.UTF_8);
		return List.of(throughputFile, latencyFile);
	}

	/** Workload to target to closed-loop operations per second. */
	static Map<String, Map<String, Double>> throughput(Path raw, List<String> targets, List<String> workloads) {
		Map<String, Map<String, Double>> values = new LinkedHashMap<>();
		for (String workload : workloads) {
			Map<String, Double> bars = new LinkedHashMap<>();
			for (String target : targets) {
				value(raw.resolve(target).resolve(workload + "-closed/run.txt"), "OVERALL", "Throughput(ops/sec)")
					.ifPresent((opsPerSecond) -> bars.put(target, opsPerSecond));
			}
			if (!bars.isEmpty()) {
				values.put(workload.toUpperCase(Locale.ROOT), bars);
			}
		}
		return values;
	}

	/**
	 * "Workload operation" to target to the intended p99 at the fixed rate, in ms, after
	 * the run's first {@code settleSeconds}.
	 */
	static Map<String, Map<String, Double>> p99(Path raw, List<String> targets, List<String> workloads,
			double settleSeconds) {
		Map<String, Map<String, Double>> values = new LinkedHashMap<>();
		for (String workload : workloads) {
			for (String operation : OPERATIONS) {
				Map<String, Double> bars = new LinkedHashMap<>();
				for (String target : targets) {
					YcsbLatency
						.settled(raw.resolve(target).resolve(workload + "-rate/run-Intended-" + operation + ".hdr"),
								settleSeconds)
						.ifPresent((percentiles) -> bars.put(target, percentiles.p99() / 1000.0));
				}
				if (!bars.isEmpty()) {
					values.put(workload.toUpperCase(Locale.ROOT) + " " + label(operation), bars);
				}
			}
		}
		return values;
	}

	/**
	 * A figure of YCSB's summary: the line {@code [SERIES], FIELD, VALUE}; empty when the
	 * file or the line is missing.
	 */
	static OptionalDouble value(Path summary, String series, String field) {
		if (!Files.isRegularFile(summary)) {
			return OptionalDouble.empty();
		}
		String prefix = "[" + series + "], " + field + ", ";
		try {
			for (String line : Files.readAllLines(summary, StandardCharsets.UTF_8)) {
				if (line.startsWith(prefix)) {
					try {
						return OptionalDouble.of(Double.parseDouble(line.substring(prefix.length()).trim()));
					}
					catch (NumberFormatException ex) {
						throw new IllegalArgumentException(summary + ": not a number in '" + line + "'", ex);
					}
				}
			}
			return OptionalDouble.empty();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** An operation as a short axis label: "read", "update", ... and "rmw". */
	private static String label(String operation) {
		return operation.equals("READ-MODIFY-WRITE") ? "rmw" : operation.toLowerCase(Locale.ROOT);
	}

	private static List<String> words(String text) {
		return Arrays.stream(text.trim().split("\\s+")).filter((word) -> !word.isEmpty()).toList();
	}

}
