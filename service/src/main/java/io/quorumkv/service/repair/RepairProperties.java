package io.quorumkv.service.repair;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Anti-entropy repair (see docs/reliability.md): replicas of each token range compare
 * Merkle trees and stream only the entries that differ, on a schedule and on demand.
 *
 * @param scheduled whether this node repairs its primary keys (those it is the first
 * owner of) every interval
 * @param interval time between scheduled repairs; keep it well under the tombstone grace
 * period
 * @param jitter each wait is drawn within this fraction of the interval around it
 * @param ranges slices of the token space repaired and recorded separately (the same on
 * every node)
 * @param leavesPerRange leaves of each range's tree, a power of two: more leaves, less
 * compared entry by entry when few entries differ, more memory (24 bytes a node)
 * @param descendBelow a differing sub-range with at most this many entries on both sides
 * is compared entry by entry rather than descended into
 * @param maxDigests entry digests a repair holds at once, over every replica: the
 * replicas' digest streams are merged by key and settled in batches of this many digests
 * @param batch reads or writes in flight on the replica streams when pulling and pushing
 * @param maxEntriesPerSecond entries a second this node's repair work reads, over every
 * scan (its repairs and its peers'); 0 for no limit
 * @param callTimeout longest wait for one repair call to a peer (a tree build scans its
 * storage)
 * @param sessionTimeout a node drops a peer's repair session idle this long
 * @param maxServedSessions peers' repair sessions a node serves at once; more are refused
 * with 503
 */
@ConfigurationProperties("quorumkv.repair")
public record RepairProperties(@DefaultValue("true") boolean scheduled, @DefaultValue("24h") Duration interval,
		@DefaultValue("0.1") double jitter, @DefaultValue("16") int ranges, @DefaultValue("4096") int leavesPerRange,
		@DefaultValue("32") int descendBelow, @DefaultValue("100000") int maxDigests, @DefaultValue("256") int batch,
		@DefaultValue("50000") long maxEntriesPerSecond, @DefaultValue("10m") Duration callTimeout,
		@DefaultValue("10m") Duration sessionTimeout, @DefaultValue("2") int maxServedSessions) {

	public RepairProperties {
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException("quorumkv.repair.interval must be positive");
		}
		if (jitter < 0 || jitter >= 1) {
			throw new IllegalArgumentException("quorumkv.repair.jitter must be in [0, 1)");
		}
		if (ranges < 1 || ranges > 65_536) {
			throw new IllegalArgumentException("quorumkv.repair.ranges must be 1..65536");
		}
		if (leavesPerRange < 1 || leavesPerRange > 1 << 20 || Integer.bitCount(leavesPerRange) != 1) {
			throw new IllegalArgumentException("quorumkv.repair.leaves-per-range must be a power of two, 1..2^20");
		}
		if (descendBelow < 1 || maxDigests < 1 || batch < 1 || maxServedSessions < 1) {
			throw new IllegalArgumentException(
					"quorumkv.repair.descend-below, max-digests, batch and max-served-sessions must be at least 1");
		}
		if (maxEntriesPerSecond < 0) {
			throw new IllegalArgumentException("quorumkv.repair.max-entries-per-second must not be negative");
		}
		if (callTimeout.isNegative() || callTimeout.isZero() || sessionTimeout.isNegative()
				|| sessionTimeout.isZero()) {
			throw new IllegalArgumentException("quorumkv.repair.call-timeout and session-timeout must be positive");
		}
	}

}
