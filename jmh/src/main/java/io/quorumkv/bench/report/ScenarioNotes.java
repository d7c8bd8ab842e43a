package io.quorumkv.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.quorumkv.bench.report.LoadRun.SocketErrors;

/**
 * The notes under a report's scenario table: the faults injected during measured runs
 * ({@code kill=}/{@code restart=}), and the runs whose figures need care because the load
 * generator counted socket errors or fell behind its constant rate.
 */
final class ScenarioNotes {

	/** Below this share of its target, a wrk2 run fell behind its constant rate. */
	private static final double BEHIND = 0.95;

	private ScenarioNotes() {
	}

	/**
	 * The notes, or an empty string when no run needs one.
	 * @param runs the scenarios in table order
	 * @return markdown, ending with a blank line when not empty
	 */
	static String render(List<ScenarioRun> runs) {
		StringBuilder md = new StringBuilder();
		List<ScenarioRun> faulty = runs.stream().filter(ScenarioRun::hasFaults).toList();
		if (!faulty.isEmpty()) {
			md.append("† Faults during the measured run, in seconds from its start:\n\n");
			faulty.forEach((scenario) -> md.append("- ").append(fault(scenario)).append('\n'));
			md.append('\n');
		}
		List<String> caveats = new ArrayList<>();
		runs.forEach((scenario) -> caveats.addAll(caveats(scenario)));
		if (!caveats.isEmpty()) {
			md.append("Read with care:\n\n");
			caveats.forEach((caveat) -> md.append("- ").append(caveat).append('\n'));
			md.append('\n');
		}
		return md.toString();
	}

	private static String fault(ScenarioRun scenario) {
		LoadRun run = scenario.run();
		StringBuilder text = new StringBuilder(ReportWriter.cell(scenario.label())).append(": ");
		if (scenario.faults().isEmpty()) {
			text.append("`kill=").append(ReportWriter.cell(scenario.setting("kill", "?"))).append('`');
			if (scenario.settings().containsKey("restart")) {
				text.append(" `restart=").append(ReportWriter.cell(scenario.setting("restart", "?"))).append('`');
			}
			text.append(" was planned, but no event was recorded (no events.txt): the fault may not have happened");
		}
		else {
			text.append(steps(scenario.faults(), run.durationSeconds()))
				.append(", in a ")
				.append(ReportWriter.number(run.durationSeconds()))
				.append(" s measured run");
		}
		return text.append(". ")
			.append(run.tool().displayName())
			.append(" counted ")
			.append(ReportWriter.non2xx(run, " non-2xx"))
			.append(", ")
			.append(run.socketErrors().errors())
			.append(" socket errors and ")
			.append(run.socketErrors().timeout())
			.append(" timeouts over the whole run.")
			.toString();
	}

	/**
	 * "node 3 killed (SIGKILL) at 20.0 s, restarted at 40.0 s, ready again at 52.3 s".
	 */
	static String steps(List<FaultEvent> events, double durationSeconds) {
		List<String> steps = new ArrayList<>();
		int node = 0;
		for (FaultEvent event : events) {
			String step = ((event.node() != node) ? "node " + event.node() + " " : "") + event.kind().phrase()
					+ String.format(Locale.ROOT, " at %.1f s", event.atSeconds())
					+ ((event.atSeconds() > durationSeconds) ? " (after the run ended)" : "");
			steps.add(step);
			node = event.node();
		}
		return String.join(", ", steps);
	}

	private static List<String> caveats(ScenarioRun scenario) {
		LoadRun run = scenario.run();
		String label = ReportWriter.cell(scenario.label());
		List<String> caveats = new ArrayList<>();
		SocketErrors errors = run.socketErrors();
		if (errors.errors() + errors.timeout() > 0) {
			// wrk and wrk2 record the latency of answered requests only.
			caveats.add(label + ": " + errors.errors() + " socket errors (connect " + errors.connect() + ", read "
					+ errors.read() + ", write " + errors.write() + ") and " + errors.timeout()
					+ " timeouts; its latency figures describe only the requests that were answered.");
		}
		double target = scenario.targetRate();
		if (run.tool() == LoadTool.WRK2 && target > 0 && run.requestsPerSecond() < BEHIND * target) {
			caveats.add(String.format(Locale.ROOT,
					"%s: %.0f of the %s requests/s asked for: the nodes (or the load generator) fell behind, "
							+ "so its latency figures are mostly time spent queueing.",
					label, run.requestsPerSecond(), ReportWriter.number(target)));
		}
		return caveats;
	}

}
