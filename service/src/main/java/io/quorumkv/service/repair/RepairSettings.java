package io.quorumkv.service.repair;

import java.time.Duration;

/**
 * What repair needs of its configuration, derived once.
 *
 * @param depth each range's tree depth ({@code leaves-per-range = 2^depth})
 * @param descendBelow a differing node with at most this many entries on both sides is
 * compared entry by entry instead of descended
 * @param maxDigests digests held at once, over every replica: the batch the merged digest
 * streams are settled in
 * @param batch entries per batch call when streaming
 * @param callTimeout longest wait for a repair call (a tree build scans the peer)
 * @param sessionTimeout a peer drops a session idle this long
 * @param maxServedSessions sessions a node serves at once for its peers
 * @param maxKeySize the longest key a digest may carry
 */
record RepairSettings(int depth, int descendBelow, int maxDigests, int batch, Duration callTimeout,
		Duration sessionTimeout, int maxServedSessions, int maxKeySize) {

	static RepairSettings of(RepairProperties repair, int maxKeySize) {
		return new RepairSettings(Integer.numberOfTrailingZeros(repair.leavesPerRange()), repair.descendBelow(),
				repair.maxDigests(), repair.batch(), repair.callTimeout(), repair.sessionTimeout(),
				repair.maxServedSessions(), maxKeySize);
	}

}
