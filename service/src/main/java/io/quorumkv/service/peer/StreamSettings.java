package io.quorumkv.service.peer;

import java.time.Duration;

/**
 * How the replica streams ({@link ReplicaStreams}) behave.
 *
 * @param maxInFlight operations in flight on one stream; more are refused at once
 * @param maxFrameSize the largest frame sent or accepted
 * @param maxKeySize the longest key an answer may hold
 * @param timeout each operation's deadline
 * @param heartbeat how often an open stream pings its peer (keeps it open through the
 * peer's read timeout, and measures the peer's clock)
 * @param idleClose an open stream that carried no operation for this long is closed
 * @param maxBackoff the longest wait before a new connection after failed ones
 */
public record StreamSettings(int maxInFlight, int maxFrameSize, int maxKeySize, Duration timeout, Duration heartbeat,
		Duration idleClose, Duration maxBackoff) {

	public StreamSettings {
		if (maxInFlight < 1 || maxFrameSize < 1024) {
			throw new IllegalArgumentException("a stream needs room for an operation and a frame");
		}
	}

}
