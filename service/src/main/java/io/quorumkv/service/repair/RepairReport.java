package io.quorumkv.service.repair;

import java.time.Duration;
import java.util.List;

/**
 * What one repair did.
 *
 * @param scope which ranges it covered
 * @param ranges each range's outcome
 * @param entriesIn entries pulled from peers into this node
 * @param entriesOut entries pushed from this node to peers (one per peer and key)
 * @param duration from start to end
 */
public record RepairReport(RepairService.Scope scope, List<RangeOutcome> ranges, long entriesIn, long entriesOut,
		Duration duration) {

	public RepairReport {
		ranges = List.copyOf(ranges);
	}

	/**
	 * One range: compared with all its replicas or not, found different or not.
	 *
	 * @param index the range's number
	 * @param tokens the range
	 * @param differed whether a replica's tree differed from this node's
	 * @param failure why a replica could not be compared or streamed to, or null when
	 * every replica took part to the end
	 */
	public record RangeOutcome(int index, TokenRange tokens, boolean differed,
			@org.jspecify.annotations.Nullable String failure) {

		public boolean succeeded() {
			return this.failure == null;
		}

	}

	public long rangesCompared() {
		return this.ranges.stream().filter(RangeOutcome::succeeded).count();
	}

	public long rangesDiffered() {
		return this.ranges.stream().filter(RangeOutcome::differed).count();
	}

	public long rangesFailed() {
		return this.ranges.stream().filter((range) -> !range.succeeded()).count();
	}

}
