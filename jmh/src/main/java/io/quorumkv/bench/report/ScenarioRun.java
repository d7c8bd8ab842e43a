package io.quorumkv.bench.report;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One measured scenario of a load test: its settings as the runner recorded them, the
 * exact command of the measured run, what it measured, the faults injected during it and
 * its flame graphs.
 *
 * @param id the scenario's folder name under {@code raw/}, such as {@code 01-h2-n1-put}
 * @param settings the runner's {@code scenario.properties} (backend, nodes, op, rate...)
 * @param command the load generator command line of the measured run
 * @param run the measured figures
 * @param faults the kill/restart steps during the measured run, in order; empty without a
 * fault schedule
 * @param flameGraphs flame graph file names, relative to the report folder
 */
public record ScenarioRun(String id, Map<String, String> settings, String command, LoadRun run, List<FaultEvent> faults,
		List<String> flameGraphs) {

	public ScenarioRun {
		Objects.requireNonNull(id, "id");
		settings = Map.copyOf(settings);
		faults = List.copyOf(faults);
		flameGraphs = List.copyOf(flameGraphs);
	}

	/**
	 * Whether the scenario had a fault schedule: recorded events, or a planned
	 * {@code kill} setting whose events are missing.
	 */
	public boolean hasFaults() {
		return !this.faults.isEmpty() || this.settings.containsKey("kill");
	}

	/** A setting, or {@code fallback} when the runner did not record it. */
	public String setting(String key, String fallback) {
		return this.settings.getOrDefault(key, fallback);
	}

	/** The operation (put, get, mixed...), the unit charts are grouped by. */
	public String operation() {
		return setting("op", "?");
	}

	/** A short label for tables and chart legends. */
	public String label() {
		return setting("name", this.id);
	}

	/**
	 * The rate the load generator aimed at: the target rate with wrk2 (constant rate) and
	 * with paced wrk (a cap), 0 for wrk flat out.
	 */
	public double appliedRate() {
		return (this.run.tool() == LoadTool.WRK2 || paced()) ? targetRate() : 0;
	}

	/** Whether wrk's closed loop was paced near the target rate (lua {@code delay()}). */
	public boolean paced() {
		return this.run.tool() == LoadTool.WRK && "yes".equals(setting("paced", "no"));
	}

	/** The requested constant rate, or 0 for none. */
	public double targetRate() {
		try {
			return Double.parseDouble(setting("rate", "0"));
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

}
