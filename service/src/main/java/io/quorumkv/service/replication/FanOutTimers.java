package io.quorumkv.service.replication;

import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The time from a request's fan-out to its quorum reached or lost
 * ({@code quorumkv.replication.fanout}, by operation and outcome), with a percentile
 * histogram.
 */
final class FanOutTimers {

	private final Timer getOk;

	private final Timer getLost;

	private final Timer writeOk;

	private final Timer writeLost;

	FanOutTimers(MeterRegistry meters) {
		this.getOk = timer(meters, "get", "quorum");
		this.getLost = timer(meters, "get", "timeout");
		this.writeOk = timer(meters, "write", "quorum");
		this.writeLost = timer(meters, "write", "timeout");
	}

	private static Timer timer(MeterRegistry meters, String operation, String outcome) {
		return Timer.builder("quorumkv.replication.fanout")
			.description("Time from fan-out to quorum reached (or lost: answered 504)")
			.tag("op", operation)
			.tag("outcome", outcome)
			.publishPercentileHistogram()
			.register(meters);
	}

	/**
	 * A {@code get} or {@code write} fanned out at {@code start} reached its quorum or
	 * not.
	 */
	void record(String operation, long start, boolean reached) {
		Timer timer = operation.equals("get") ? (reached ? this.getOk : this.getLost)
				: (reached ? this.writeOk : this.writeLost);
		timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
	}

}
