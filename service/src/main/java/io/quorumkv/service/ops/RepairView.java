package io.quorumkv.service.ops;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.repair.RepairRange;
import io.quorumkv.service.repair.RepairReport;
import io.quorumkv.service.repair.RepairService;
import org.jspecify.annotations.Nullable;

/**
 * Repair as operators see it: the last repair's report, and per range its replicas and
 * when it was last repaired with all of them.
 */
final class RepairView {

	private final RepairService repair;

	private final Node self;

	RepairView(RepairService repair, Node self) {
		this.repair = repair;
		this.self = self;
	}

	/** A repair's report, as the answer of the action. */
	static Map<String, Object> report(RepairReport report) {
		Map<String, Object> out = new LinkedHashMap<>();
		out.put("scope", report.scope().name().toLowerCase());
		out.put("durationMs", report.duration().toMillis());
		out.put("rangesCompared", report.rangesCompared());
		out.put("rangesDiffered", report.rangesDiffered());
		out.put("rangesFailed", report.rangesFailed());
		out.put("entriesIn", report.entriesIn());
		out.put("entriesOut", report.entriesOut());
		List<String> failures = new ArrayList<>();
		report.ranges()
			.stream()
			.filter((range) -> !range.succeeded())
			.forEach((range) -> failures.add("range " + range.index() + ": " + range.failure()));
		out.put("failures", failures);
		return out;
	}

	Map<String, @Nullable Object> json() {
		Map<String, @Nullable Object> out = new LinkedHashMap<>();
		out.put("running", this.repair.running());
		out.put("last", this.repair.last().map(RepairView::report).orElse(null));
		List<Map<String, @Nullable Object>> ranges = new ArrayList<>();
		for (RepairRange range : this.repair.ranges()) {
			Map<String, @Nullable Object> row = new LinkedHashMap<>();
			row.put("range", range.index());
			row.put("tokens", range.tokens().toString());
			row.put("primary", range.primary().id());
			row.put("replicas", range.replicas().stream().map(Node::id).toList());
			row.put("lastSuccess", lastSuccess(range).map(Instant::toString).orElse(null));
			ranges.add(row);
		}
		out.put("ranges", ranges);
		return out;
	}

	String table() {
		TextTable table = new TextTable("RANGE", "TOKENS", "PRIMARY", "REPLICAS", "LAST-SUCCESS", "AGE");
		Instant now = Instant.now();
		for (RepairRange range : this.repair.ranges()) {
			Optional<Instant> last = lastSuccess(range);
			table.row(range.index(), range.tokens(), range.primary().id(), range.replicas().size(),
					last.map(Instant::toString).orElse("never"),
					last.map((at) -> age(Duration.between(at, now))).orElse(null));
		}
		String summary = this.repair.last()
			.map((report) -> "last repair (" + report.scope().name().toLowerCase() + ") took "
					+ report.duration().toMillis() + " ms: ranges compared " + report.rangesCompared() + ", differed "
					+ report.rangesDiffered() + ", failed " + report.rangesFailed() + "; entries streamed in "
					+ report.entriesIn() + ", out " + report.entriesOut())
			.orElse("no repair since start");
		return "node " + this.self.id() + ": " + (this.repair.running() ? "repair running; " : "") + summary + "\n"
				+ table;
	}

	private Optional<Instant> lastSuccess(RepairRange range) {
		return this.repair.lastSuccess(range).map((micros) -> Instant.EPOCH.plusNanos(micros * 1_000));
	}

	private static String age(Duration age) {
		if (age.isNegative()) {
			return "0s";
		}
		long seconds = age.toSeconds();
		return (seconds < 120) ? seconds + "s" : (seconds < 7200) ? seconds / 60 + "m" : seconds / 3600 + "h";
	}

}
