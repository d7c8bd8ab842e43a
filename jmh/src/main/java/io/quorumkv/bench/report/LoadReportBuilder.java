package io.quorumkv.bench.report;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * Builds a load report from a runner's raw folder.
 *
 * <pre>{@code
 * java -cp jmh/target/benchmarks.jar io.quorumkv.bench.report.LoadReportBuilder \
 *     --name NAME --raw run/loadtest/NAME/raw --out docs/reports/NAME [--jmh results.json]
 * }</pre>
 *
 * <p>
 * The raw folder, as {@code scripts/loadtest.sh} writes it:
 * <ul>
 * <li>{@code setup.properties}: machine, Java, git commit, tool and version;</li>
 * <li>{@code NOTE.md} (optional): text put under the report's title;</li>
 * <li>one folder per scenario holding {@code measure.txt} (the measured run's output),
 * {@code scenario.properties}, {@code command.txt} and optional
 * {@code flame-<event>.html} and {@code events.txt} (the kill/restart steps during the
 * measured run, see {@link FaultEvent});</li>
 * <li>optional JMH results: {@code *.json} in the raw folder or its {@code jmh/}.</li>
 * </ul>
 * The report folder gets {@code README.md}, one latency chart per operation
 * ({@code latency-<op>.svg}), {@code throughput.svg} and {@code flamegraphs/}.
 */
public final class LoadReportBuilder {

	/** The hand-written analysis in a report folder, appended to its README.md. */
	static final String ANALYSIS = "ANALYSIS.md";

	private LoadReportBuilder() {
	}

	public static void main(String[] args) {
		System.setProperty("java.awt.headless", "true");
		Map<String, List<String>> options;
		try {
			options = parseArgs(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println(ex.getMessage());
			System.err
				.println("Usage: LoadReportBuilder --name NAME --raw RAW_DIR --out REPORT_DIR [--jmh FILE.json]...");
			System.exit(2);
			return;
		}
		Path raw = Path.of(options.get("raw").getFirst());
		Path out = Path.of(options.get("out").getFirst());
		List<Path> jmh = options.getOrDefault("jmh", List.of()).stream().map(Path::of).toList();
		Path readme = build(options.get("name").getFirst(), raw, out, jmh);
		System.out.println("Report written: " + readme);
	}

	static Map<String, List<String>> parseArgs(String[] args) {
		Map<String, List<String>> options = new LinkedHashMap<>();
		for (int i = 0; i < args.length; i++) {
			String key = args[i];
			if (!List.of("--name", "--raw", "--out", "--jmh").contains(key) || i + 1 >= args.length) {
				throw new IllegalArgumentException("Unknown option or missing value: " + key);
			}
			options.computeIfAbsent(key.substring(2), (k) -> new ArrayList<>()).add(args[++i]);
		}
		for (String required : List.of("name", "raw", "out")) {
			if (!options.containsKey(required)) {
				throw new IllegalArgumentException("Missing --" + required);
			}
		}
		return options;
	}

	/**
	 * Reads the raw folder and writes the report.
	 * @param name the report name (its title)
	 * @param raw the runner's raw folder
	 * @param out the report folder, created when missing
	 * @param jmhFiles more JMH JSON result files to include
	 * @return the written README.md
	 */
	public static Path build(String name, Path raw, Path out, List<Path> jmhFiles) {
		Objects.requireNonNull(name, "name");
		try {
			Files.createDirectories(out);
			Map<String, String> setup = readProperties(raw.resolve("setup.properties"));
			String note = readIfExists(raw.resolve("NOTE.md"));
			List<ScenarioRun> runs = readScenarios(raw, out);
			List<JmhResult> jmh = new ArrayList<>();
			for (Path file : jmhResultFiles(raw, jmhFiles)) {
				jmh.addAll(JmhJsonParser.parse(Files.readString(file)));
			}
			Map<String, String> charts = writeCharts(name, runs, out);
			Path readme = out.resolve("README.md");
			String report = ReportWriter.render(name, setup, note, runs, charts, jmh);
			// The written analysis is kept beside the report (it is written after reading
			// it) and goes at its end on every rebuild.
			String analysis = readIfExists(out.resolve(ANALYSIS));
			if (analysis != null) {
				report = report.stripTrailing() + "\n\n## Analysis\n\n" + analysis.strip() + "\n";
			}
			Files.writeString(readme, report);
			return readme;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static List<ScenarioRun> readScenarios(Path raw, Path out) throws IOException {
		List<Path> dirs;
		try (Stream<Path> children = Files.list(raw)) {
			dirs = children.filter((dir) -> Files.isRegularFile(dir.resolve("measure.txt"))).sorted().toList();
		}
		List<ScenarioRun> runs = new ArrayList<>();
		for (Path dir : dirs) {
			String id = dir.getFileName().toString();
			LoadRun run;
			try {
				run = WrkOutputParser.parse(Files.readString(dir.resolve("measure.txt")));
			}
			catch (IllegalArgumentException ex) {
				System.err.println("Skipping " + id + ": " + ex.getMessage());
				continue;
			}
			String command = readIfExists(dir.resolve("command.txt"));
			runs.add(new ScenarioRun(id, readProperties(dir.resolve("scenario.properties")),
					(command != null) ? command.strip() : "(not recorded)", run, readFaults(dir),
					copyFlameGraphs(id, dir, out)));
		}
		return runs;
	}

	private static List<FaultEvent> readFaults(Path dir) throws IOException {
		String events = readIfExists(dir.resolve("events.txt"));
		if (events == null) {
			return List.of();
		}
		try {
			return FaultEvent.parse(events);
		}
		catch (IllegalArgumentException ex) {
			// A fault the report cannot state must not pass for a clean run.
			throw new IllegalArgumentException(dir.resolve("events.txt") + ": " + ex.getMessage(), ex);
		}
	}

	private static List<String> copyFlameGraphs(String id, Path dir, Path out) throws IOException {
		List<Path> flames;
		try (Stream<Path> files = Files.list(dir)) {
			flames = files.filter((f) -> f.getFileName().toString().matches("flame-.*\\.html")).sorted().toList();
		}
		List<String> names = new ArrayList<>();
		for (Path flame : flames) {
			String name = "flamegraphs/" + id + "-" + flame.getFileName().toString().substring("flame-".length());
			Files.createDirectories(out.resolve("flamegraphs"));
			Files.copy(flame, out.resolve(name), StandardCopyOption.REPLACE_EXISTING);
			names.add(name);
		}
		return names;
	}

	private static Map<String, String> writeCharts(String name, List<ScenarioRun> runs, Path out) throws IOException {
		Map<String, String> charts = new LinkedHashMap<>();
		if (runs.isEmpty()) {
			return charts;
		}
		Map<String, List<ScenarioRun>> byOperation = new TreeMap<>();
		runs.forEach((run) -> byOperation.computeIfAbsent(run.operation(), (op) -> new ArrayList<>()).add(run));
		for (Map.Entry<String, List<ScenarioRun>> group : byOperation.entrySet()) {
			String op = group.getKey().replaceAll("[^A-Za-z0-9_-]", "_");
			String caption = "Latency by percentile: " + group.getKey().toUpperCase(Locale.ROOT);
			String file = "latency-" + op + ".svg";
			Files.writeString(out.resolve(file), Charts.latencySpectrum(name + ": " + caption, group.getValue()),
					StandardCharsets.UTF_8);
			charts.put(caption, file);
		}
		Files.writeString(out.resolve("throughput.svg"), Charts.throughput(name + ": throughput", runs),
				StandardCharsets.UTF_8);
		charts.put("Throughput", "throughput.svg");
		return charts;
	}

	private static List<Path> jmhResultFiles(Path raw, List<Path> extra) throws IOException {
		List<Path> files = new ArrayList<>();
		for (Path dir : List.of(raw, raw.resolve("jmh"))) {
			if (Files.isDirectory(dir)) {
				try (Stream<Path> children = Files.list(dir)) {
					children.filter((f) -> f.toString().endsWith(".json")).sorted().forEach(files::add);
				}
			}
		}
		files.addAll(extra);
		return files;
	}

	private static Map<String, String> readProperties(Path file) throws IOException {
		Map<String, String> values = new TreeMap<>();
		if (Files.isRegularFile(file)) {
			Properties properties = new Properties();
			try (Reader reader = Files.newBufferedReader(file)) {
				properties.load(reader);
			}
			properties.stringPropertyNames().forEach((key) -> values.put(key, properties.getProperty(key)));
		}
		return values;
	}

	private static @Nullable String readIfExists(Path file) throws IOException {
		return Files.isRegularFile(file) ? Files.readString(file) : null;
	}

}
