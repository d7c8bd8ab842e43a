package io.quorumkv.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.quorumkv.bench.report.LoadRun.LatencyPoint;
import io.quorumkv.bench.report.LoadRun.SocketErrors;

/**
 * Reads the standard output of wrk2 ({@code --latency}, optionally {@code -U}) and of wrk
 * ({@code --latency}), plus the {@code SUMMARY} line the QuorumKV lua scripts print.
 *
 * <p>
 * wrk2 prints the coordinated-omission-corrected distribution ("Recorded Latency") first
 * and, with {@code -U}, the uncorrected one after it; only the corrected one is kept.
 */
public final class WrkOutputParser {

	private static final Pattern THREADS = Pattern.compile("^\\s*(\\d+) threads and (\\d+) connections");

	private static final Pattern PERCENTILE = Pattern.compile("^\\s*([\\d.]+)%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$");

	private static final Pattern SPECTRUM = Pattern
		.compile("^\\s*([\\d.]+)\\s+([\\d.]+)\\s+(\\d+)\\s+([\\d.]+|inf)\\s*$");

	private static final Pattern STATS_LATENCY = Pattern
		.compile("^\\s*Latency\\s+[\\d.]+\\w+\\s+[\\d.]+\\w+\\s+([\\d.]+)(us|ms|s|m|h)\\s");

	private static final Pattern HDR_MAX = Pattern.compile("^#\\[Max\\s*=\\s*([\\d.]+),");

	private static final Pattern REQUESTS = Pattern.compile("^\\s*(\\d+) requests in ([\\d.]+)(us|ms|s|m|h),");

	private static final Pattern NON_2XX = Pattern.compile("^\\s*Non-2xx or 3xx responses:\\s*(\\d+)");

	private static final Pattern SOCKET_ERRORS = Pattern
		.compile("^\\s*Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");

	private static final Pattern RPS = Pattern.compile("^Requests/sec:\\s*([\\d.]+)");

	private static final Pattern TRANSFER = Pattern.compile("^Transfer/sec:\\s*([\\d.]+)([KMGT]?B)");

	private WrkOutputParser() {
	}

	/**
	 * Parses one run's output.
	 * @param output everything the tool printed
	 * @return the figures
	 * @throws IllegalArgumentException when the text is not a complete wrk or wrk2 output
	 */
	public static LoadRun parse(String output) {
		boolean wrk2 = output.contains("Thread calibration") || output.contains("HdrHistogram");
		int threads = 0;
		int connections = 0;
		long requests = -1;
		double duration = 0;
		double rps = -1;
		double transfer = 0;
		long non2xx = 0;
		SocketErrors errors = SocketErrors.NONE;
		double max = -1;
		double statsMax = -1;
		Map<Double, Double> percentiles = new LinkedHashMap<>();
		List<LatencyPoint> spectrum = new ArrayList<>();
		Map<String, String> summary = new LinkedHashMap<>();
		// 0: before or inside the corrected (or only) distribution, 1: inside wrk2's
		// uncorrected one, which is skipped.
		boolean uncorrected = false;
		for (String line : output.split("\\R")) {
			if (line.contains("Uncorrected Latency")) {
				uncorrected = true;
				continue;
			}
			if (line.startsWith("SUMMARY ")) {
				summary.putAll(parseSummary(line));
				continue;
			}
			Matcher m;
			if ((m = THREADS.matcher(line)).find()) {
				threads = Integer.parseInt(m.group(1));
				connections = Integer.parseInt(m.group(2));
			}
			else if ((m = REQUESTS.matcher(line)).find()) {
				requests = Long.parseLong(m.group(1));
				duration = toMillis(m.group(2), m.group(3)) / 1000.0;
				uncorrected = false;
			}
			else if (uncorrected) {
				continue;
			}
			else if ((m = PERCENTILE.matcher(line)).find()) {
				percentiles.put(Double.parseDouble(m.group(1)), toMillis(m.group(2), m.group(3)));
			}
			else if ((m = SPECTRUM.matcher(line)).find()) {
				spectrum.add(new LatencyPoint(Double.parseDouble(m.group(2)), Double.parseDouble(m.group(1))));
			}
			else if ((m = STATS_LATENCY.matcher(line)).find()) {
				statsMax = toMillis(m.group(1), m.group(2));
			}
			else if ((m = HDR_MAX.matcher(line)).find()) {
				max = Double.parseDouble(m.group(1));
			}
			else if ((m = NON_2XX.matcher(line)).find()) {
				non2xx = Long.parseLong(m.group(1));
			}
			else if ((m = SOCKET_ERRORS.matcher(line)).find()) {
				errors = new SocketErrors(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)),
						Long.parseLong(m.group(3)), Long.parseLong(m.group(4)));
			}
			else if ((m = RPS.matcher(line)).find()) {
				rps = Double.parseDouble(m.group(1));
			}
			else if ((m = TRANSFER.matcher(line)).find()) {
				transfer = toBytes(m.group(1), m.group(2));
			}
		}
		if (requests < 0 || rps < 0) {
			throw new IllegalArgumentException(
					"Not a complete wrk or wrk2 output (no \"requests in\" or \"Requests/sec\" line)");
		}
		Double hundred = percentiles.remove(100.0);
		if (max < 0) {
			max = (hundred != null) ? hundred : statsMax;
		}
		return new LoadRun(wrk2 ? LoadTool.WRK2 : LoadTool.WRK, threads, connections, requests, duration, rps, transfer,
				non2xx, errors, percentiles, spectrum, max, summary);
	}

	/** The {@code key=value} pairs of a {@code SUMMARY} line, in order. */
	static Map<String, String> parseSummary(String line) {
		Map<String, String> pairs = new LinkedHashMap<>();
		for (String token : line.substring("SUMMARY".length()).trim().split("\\s+")) {
			int eq = token.indexOf('=');
			if (eq > 0) {
				pairs.put(token.substring(0, eq), token.substring(eq + 1));
			}
		}
		return pairs;
	}

	private static double toMillis(String value, String unit) {
		double number = Double.parseDouble(value);
		return switch (unit) {
			case "us" -> number / 1000.0;
			case "ms" -> number;
			case "s" -> number * 1000.0;
			case "m" -> number * 60_000.0;
			case "h" -> number * 3_600_000.0;
			default -> throw new IllegalArgumentException("Unknown time unit " + unit);
		};
	}

	private static double toBytes(String value, String unit) {
		double number = Double.parseDouble(value);
		int power = "BKMGT".indexOf(unit.toUpperCase(Locale.ROOT).charAt(0));
		return number * Math.pow(1024, Math.max(power, 0));
	}

}
