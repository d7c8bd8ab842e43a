package io.quorumkv.bench.report;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * One benchmark of a JMH JSON result file ({@code -rf json}).
 *
 * @param benchmark the benchmark method, fully qualified
 * @param mode {@code thrpt}, {@code avgt}, {@code sample}, {@code ss}
 * @param threads benchmark threads
 * @param forks forks
 * @param params the {@code @Param} values, sorted by name
 * @param score the primary metric's score
 * @param scoreError its error (99.9% confidence half-width), NaN when JMH gives none
 * @param unit the score's unit, such as {@code ops/s}
 */
public record JmhResult(String benchmark, String mode, int threads, int forks, Map<String, String> params, double score,
		double scoreError, String unit) {

	public JmhResult {
		// Sorted, so that reports list parameters in a stable order.
		params = Collections.unmodifiableSortedMap(new TreeMap<>(params));
	}

	/** The benchmark's short name: class and method. */
	public String shortName() {
		String[] parts = this.benchmark.split("\\.");
		return (parts.length < 2) ? this.benchmark : parts[parts.length - 2] + "." + parts[parts.length - 1];
	}

}
