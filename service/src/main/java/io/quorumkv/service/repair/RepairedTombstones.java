package io.quorumkv.service.repair;

import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.storage.PurgePolicy;

/**
 * The node's tombstone purge rule (DESIGN §3), set on its storage: a tombstone written at
 * {@code t} may be dropped only when
 * <ol>
 * <li>it is past the grace period: {@code t < wall clock - tombstone-grace-period},
 * and</li>
 * <li>its key was covered by a repair of its range that reached all the range's replicas
 * (one run by the key's primary owner, the first of its owners on the ring, in either
 * scope, or one of scope {@code all} run by any of its owners: such a repair compared the
 * key between all its owners), and that repair started after it was written:
 * {@code t < repairedAt - margin}, where {@code margin} is
 * {@code max-clock-skew + replica-timeout}: a write stamped that long before a repair
 * started was on every replica that acknowledged it before the repair's scans (the
 * coordinator's clock at most the skew behind the repairing node's), so the repair saw it
 * and gave it to the replicas that had missed it.</li>
 * </ol>
 * A tombstone past the grace period but not covered by a repair is kept, and counted
 * ({@code quorumkv.tombstones.held-back}, each time a backend weighs one).
 */
final class RepairedTombstones implements PurgePolicy {

	private final RangeReplicas ranges;

	private final RepairHistory history;

	private final HybridLogicalClock clock;

	private final long graceMicros;

	private final long marginMicros;

	private final Counter heldBack;

	RepairedTombstones(RangeReplicas ranges, RepairHistory history, HybridLogicalClock clock, Duration grace,
			Duration margin, MeterRegistry meters) {
		this.ranges = ranges;
		this.history = history;
		this.clock = clock;
		this.graceMicros = saturatedMicros(grace);
		this.marginMicros = saturatedMicros(margin);
		this.heldBack = Counter.builder("quorumkv.tombstones.held-back")
			.description("Tombstones past the grace period kept because no repair of their range covered them"
					+ " (each time a backend weighed one)")
			.register(meters);
	}

	@Override
	public boolean mayPurge(byte[] key, long timestamp) {
		long wall = this.clock.wallMicros();
		if (wall - this.graceMicros <= timestamp || wall - this.graceMicros > wall) {
			return false;
		}
		long repairedAt = repairedAt(key);
		if (repairedAt == Long.MIN_VALUE || timestamp >= repairedAt - this.marginMicros) {
			this.heldBack.increment();
			return false;
		}
		return true;
	}

	/**
	 * The start of the last repair that covered the key: one of its primary owner (either
	 * scope), or one of scope {@code all} of any of its owners.
	 */
	private long repairedAt(byte[] key) {
		List<String> owners = this.ranges.owners(key);
		TokenRange range = owners.isEmpty() ? null
				: this.ranges.rangeOf(TokenRange.token(key)).map(RepairRange::tokens).orElse(null);
		if (range == null) {
			return Long.MIN_VALUE;
		}
		long at = this.history.repairedAt(range, owners.get(0), RepairService.Scope.PRIMARY);
		for (String owner : owners) {
			at = Math.max(at, this.history.repairedAt(range, owner, RepairService.Scope.ALL));
		}
		return at;
	}

	private static long saturatedMicros(Duration duration) {
		try {
			return Math.multiplyExact(duration.getSeconds(), 1_000_000L) + duration.getNano() / 1_000;
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE;
		}
	}

}
