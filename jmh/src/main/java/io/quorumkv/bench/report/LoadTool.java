package io.quorumkv.bench.report;

/** The load generators whose output the report builder reads. */
public enum LoadTool {

	/**
	 * giltene/wrk2: constant request rate ({@code -R}), latency corrected for coordinated
	 * omission.
	 */
	WRK2("wrk2", "constant rate, latency corrected for coordinated omission"),

	/** wg/wrk: closed loop, each connection sends its next request after the answer. */
	WRK("wrk", "closed loop (paced near the target rate where the table says so), latency not corrected for "
			+ "coordinated omission");

	private final String displayName;

	private final String model;

	LoadTool(String displayName, String model) {
		this.displayName = displayName;
		this.model = model;
	}

	/** The tool's name as users type it. */
	public String displayName() {
		return this.displayName;
	}

	/** How the tool applies load, in a few words for the report. */
	public String model() {
		return this.model;
	}

}
