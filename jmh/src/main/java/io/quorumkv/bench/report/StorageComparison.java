package io.quorumkv.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * The LSM-against-RocksDB table of {@code docs/benchmarks.md}, from the JMH JSON files of
 * {@code StorageBenchmark} ({@code scripts/storage-bench.sh} writes them).
 *
 * <pre>{@code
 * java -cp jmh/target/benchmarks.jar io.quorumkv.bench.report.StorageComparison run/jmh/a.json run/jmh/b.json
 * }</pre>
 *
 * <p>
 * One row per benchmark and key count: the LSM, RocksDB with blind writes
 * ({@code rocksdb}) and RocksDB comparing versions ({@code rocksdb-lww}, write rows
 * only), each score with its 99.9% error as a percentage of the score, and the LSM's
 * ratio to RocksDB at equal semantics (to {@code rocksdb-lww} where it was measured, else
 * to {@code rocksdb}). A row where any error exceeds {@link #ERROR_LIMIT} of its score is
 * flagged: its ratio is not a finding.
 */
public final class StorageComparison {

	/** Error, as a fraction of the score, above which a row is flagged. */
	public static final double ERROR_LIMIT = 0.10;

	private static final List<String> ORDER = List.of("put", "putList32", "getPresent", "getAbsent", "scan1000");

	private StorageComparison() {
	}

	public static void main(String[] args) throws IOException {
		if (args.length == 0) {
			System.err.println("usage: StorageComparison RESULT.json...");
			System.exit(2);
		}
		List<JmhResult> results = new ArrayList<>();
		for (String file : args) {
			results.addAll(JmhJsonParser.parse(Files.readString(Path.of(file), StandardCharsets.UTF_8)));
		}
		System.out.print(table(results));
	}

	/** The markdown table of {@code results} (other benchmarks are ignored). */
	public static String table(List<JmhResult> results) {
		Objects.requireNonNull(results, "results");
		TreeSet<Integer> keyCounts = new TreeSet<>();
		for (JmhResult result : results) {
			if (isStorage(result) && result.params().containsKey("keys")) {
				keyCounts.add(Integer.valueOf(result.params().get("keys")));
			}
		}
		StringBuilder out = new StringBuilder();
		out.append("| keys | benchmark | LSM ops/s | RocksDB ops/s (blind put) | RocksDB ops/s (compare, then put) "
				+ "| LSM / RocksDB | error > 10%? |\n");
		out.append("|---:|---|---:|---:|---:|---:|---|\n");
		for (int keys : keyCounts) {
			for (String method : ORDER) {
				JmhResult lsm = find(results, method, "lsm", keys);
				JmhResult blind = find(results, method, "rocksdb", keys);
				JmhResult compare = find(results, method, "rocksdb-lww", keys);
				if (lsm == null && blind == null && compare == null) {
					continue;
				}
				JmhResult anchor = (compare != null) ? compare : blind;
				String ratio = (lsm != null && anchor != null) ? String.format(Locale.ROOT, "%.2f×%s",
						lsm.score() / anchor.score(), (anchor == compare) ? " (to compare)" : "") : "–";
				List<String> flagged = new ArrayList<>();
				flag(flagged, "LSM", lsm);
				flag(flagged, "blind", blind);
				flag(flagged, "compare", compare);
				out.append(String.format(Locale.ROOT, "| %,d | `%s` | %s | %s | %s | %s | %s |%n", keys, method,
						cell(lsm), cell(blind), cell(compare), ratio,
						flagged.isEmpty() ? "no" : "**yes**: " + String.join(", ", flagged)));
			}
		}
		return out.toString();
	}

	private static boolean isStorage(JmhResult result) {
		return result.shortName().startsWith("StorageBenchmark.");
	}

	private static @Nullable JmhResult find(List<JmhResult> results, String method, String backend, int keys) {
		for (JmhResult result : results) {
			if (isStorage(result) && result.shortName().equals("StorageBenchmark." + method)
					&& backend.equals(result.params().get("backend"))
					&& String.valueOf(keys).equals(result.params().get("keys"))) {
				return result;
			}
		}
		return null;
	}

	private static String cell(@Nullable JmhResult result) {
		if (result == null) {
			return "–";
		}
		return String.format(Locale.ROOT, "%,.0f ± %.0f%%", result.score(), 100 * relativeError(result));
	}

	private static void flag(List<String> flagged, String label, @Nullable JmhResult result) {
		if (result != null && !(relativeError(result) <= ERROR_LIMIT)) {
			flagged.add(label);
		}
	}

	/** Error over score; NaN (not flagged as fine) when JMH gave no error. */
	static double relativeError(JmhResult result) {
		return result.scoreError() / result.score();
	}

}
