package io.quorumkv.service.repair;

import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Repair's meters: runs by outcome, ranges compared, differed and failed, entries
 * streamed in and out, the duration of each repair, and per range when it was last
 * repaired successfully (seconds since the epoch; NaN never).
 */
final class RepairMetrics {

	private final Counter succeeded;

	private final Counter partial;

	private final Counter failed;

	private final Counter compared;

	private final Counter differed;

	private final Counter rangesFailed;

	private final Counter entriesIn;

	private final Counter entriesOut;

	private final Timer duration;

	RepairMetrics(MeterRegistry meters, RangeSlices ranges, RepairHistory history) {
		this.succeeded = runs(meters, "success");
		this.partial = runs(meters, "partial");
		this.failed = runs(meters, "error");
		this.compared = ranges(meters, "compared");
		this.differed = ranges(meters, "differed");
		this.rangesFailed = ranges(meters, "failed");
		this.entriesIn = entries(meters, "in");
		this.entriesOut = entries(meters, "out");
		this.duration = Timer.builder("quorumkv.repair.duration")
			.description("Time of each repair this node ran")
			.register(meters);
		for (int i = 0; i < ranges.size(); i++) {
			int index = i;
			Gauge
				.builder("quorumkv.repair.last.success", history,
						(h) -> ranges.rangeOf(index)
							.flatMap((range) -> RepairService.lastSuccess(h, range))
							.map((at) -> at / 1e6)
							.orElse(Double.NaN))
				.description("When every key of the range was last covered by a repair that reached all its"
						+ " replicas (seconds since the epoch)")
				.tag("range", Integer.toString(index))
				.baseUnit("seconds")
				.register(meters);
		}
	}

	private static Counter runs(MeterRegistry meters, String outcome) {
		return Counter.builder("quorumkv.repair.runs")
			.description("Repairs this node ran, by outcome (partial: some ranges failed)")
			.tag("outcome", outcome)
			.register(meters);
	}

	private static Counter ranges(MeterRegistry meters, String result) {
		return Counter.builder("quorumkv.repair.ranges")
			.description("Ranges of this node's repairs: compared with all replicas, found different, failed")
			.tag("result", result)
			.register(meters);
	}

	private static Counter entries(MeterRegistry meters, String direction) {
		return Counter.builder("quorumkv.repair.entries")
			.description("Entries streamed by this node's repairs: in (pulled here) and out (pushed to peers)")
			.tag("direction", direction)
			.register(meters);
	}

	void record(RepairReport report) {
		(report.rangesFailed() > 0 ? this.partial : this.succeeded).increment();
		this.compared.increment(report.rangesCompared());
		this.differed.increment(report.rangesDiffered());
		this.rangesFailed.increment(report.rangesFailed());
		this.entriesIn.increment(report.entriesIn());
		this.entriesOut.increment(report.entriesOut());
		this.duration.record(report.duration().toNanos(), TimeUnit.NANOSECONDS);
	}

	/** The ranges of the ring of now, by index; the number of ranges never changes. */
	interface RangeSlices {

		int size();

		java.util.Optional<RepairRange> rangeOf(int index);

	}

	void failed() {
		this.failed.increment();
	}

}
