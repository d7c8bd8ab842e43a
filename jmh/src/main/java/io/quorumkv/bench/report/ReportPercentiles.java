package io.quorumkv.bench.report;

import java.util.List;

/** The percentiles the reports show. */
final class ReportPercentiles {

	/** Columns of the scenario tables (max comes apart). */
	static final List<Double> TABLE = List.of(50.0, 90.0, 99.0, 99.9, 99.99);

	/** Points drawn for a run without a detailed spectrum (wrk). */
	static final List<Double> CHARTED = List.of(50.0, 75.0, 90.0, 99.0, 99.9, 99.99);

	private ReportPercentiles() {
	}

}
