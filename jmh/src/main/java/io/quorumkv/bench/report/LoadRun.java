package io.quorumkv.bench.report;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * What one wrk2 or wrk run measured, as read from its output.
 *
 * @param tool the load generator that printed the output
 * @param threads load generator threads
 * @param connections open connections
 * @param requests completed requests
 * @param durationSeconds the measured duration
 * @param requestsPerSecond the achieved throughput ({@code Requests/sec})
 * @param transferBytesPerSecond bytes read per second ({@code Transfer/sec})
 * @param non2xx answers with a status outside 2xx and 3xx
 * @param socketErrors connect, read, write errors and timeouts
 * @param percentiles latency in milliseconds by percentile (50.0, 99.9, ...), as printed
 * by the tool's latency distribution; for wrk2 the coordinated-omission-corrected one
 * @param spectrum wrk2's detailed (corrected) percentile spectrum, empty for wrk
 * @param maxMillis the largest latency, or a negative number when not printed
 * @param summary the {@code key=value} pairs of the lua scripts' {@code SUMMARY} line
 */
public record LoadRun(LoadTool tool, int threads, int connections, long requests, double durationSeconds,
		double requestsPerSecond, double transferBytesPerSecond, long non2xx, SocketErrors socketErrors,
		Map<Double, Double> percentiles, List<LatencyPoint> spectrum, double maxMillis, Map<String, String> summary) {

	public LoadRun {
		Objects.requireNonNull(tool, "tool");
		Objects.requireNonNull(socketErrors, "socketErrors");
		percentiles = Map.copyOf(percentiles);
		spectrum = List.copyOf(spectrum);
		summary = Map.copyOf(summary);
	}

	/**
	 * The latency at a percentile: the {@code SUMMARY} line's ({@code p999_ms} for 99.9,
	 * read from the tool's histogram at full precision), else the tool's printed
	 * (rounded) figure, else the first point of the spectrum at or above it.
	 * @param percent a percentile such as 99.9
	 * @return milliseconds, or empty when the output does not tell
	 */
	public OptionalDouble latencyMillis(double percent) {
		String fromSummary = this.summary.get(summaryKey(percent));
		if (fromSummary != null) {
			return OptionalDouble.of(Double.parseDouble(fromSummary));
		}
		Double printed = this.percentiles.get(percent);
		if (printed != null) {
			return OptionalDouble.of(printed);
		}
		double fraction = fraction(percent);
		for (LatencyPoint point : this.spectrum) {
			if (point.fraction() >= fraction - 1e-9) {
				return OptionalDouble.of(point.millis());
			}
		}
		return OptionalDouble.empty();
	}

	/** The largest latency, from the {@code SUMMARY} line or the tool's own figures. */
	public OptionalDouble maxLatencyMillis() {
		String fromSummary = this.summary.get("max_ms");
		if (fromSummary != null) {
			return OptionalDouble.of(Double.parseDouble(fromSummary));
		}
		return (this.maxMillis >= 0) ? OptionalDouble.of(this.maxMillis) : OptionalDouble.empty();
	}

	/**
	 * The points to draw on a percentile chart: wrk2's spectrum, or for wrk the printed
	 * and summarised percentiles.
	 */
	public List<LatencyPoint> chartPoints() {
		if (!this.spectrum.isEmpty()) {
			return this.spectrum.stream().filter((point) -> point.fraction() < 1.0).toList();
		}
		return ReportPercentiles.CHARTED.stream()
			.filter((percent) -> percent < 100.0)
			.map((percent) -> latencyMillis(percent).stream()
				.mapToObj((millis) -> new LatencyPoint(fraction(percent), millis))
				.findFirst())
			.flatMap(java.util.Optional::stream)
			.toList();
	}

	private static double fraction(double percent) {
		return BigDecimal.valueOf(percent).movePointLeft(2).doubleValue();
	}

	static String summaryKey(double percent) {
		String digits = BigDecimal.valueOf(percent).stripTrailingZeros().toPlainString().replace(".", "");
		return "p" + digits + "_ms";
	}

	/**
	 * One point of a latency percentile spectrum.
	 *
	 * @param fraction the percentile as a fraction, 0.99 for p99
	 * @param millis the latency in milliseconds
	 */
	public record LatencyPoint(double fraction, double millis) {
	}

	/**
	 * wrk's socket error counters.
	 *
	 * @param connect failed connects
	 * @param read failed reads
	 * @param write failed writes
	 * @param timeout requests that timed out
	 */
	public record SocketErrors(long connect, long read, long write, long timeout) {

		/** No errors. */
		public static final SocketErrors NONE = new SocketErrors(0, 0, 0, 0);

		/** All errors but timeouts. */
		public long errors() {
			return this.connect + this.read + this.write;
		}

	}

}
