package io.quorumkv.service.peer;

import java.time.Duration;

import io.quorumkv.service.config.Bounds;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The streams of replica operations between nodes (docs/design.md, "The peer transport"):
 * for each peer and each event loop one long-lived exchange carries the replica reads and
 * writes, hints and read repair included. Keep {@code maxFrame} the same on every node:
 * it also bounds the frames a node accepts.
 *
 * @param maxFrame the largest frame of a stream (at least one value of the largest size
 * with its key and framing is always allowed), and the cap of the other binary bodies
 * between nodes
 * @param localWrites whether the writes a node coordinates go to its own storage
 * together, once per turn of its event loop (one WAL write for all the requests of a
 * wake-up), instead of one by one
 * @param heartbeat how often an open stream pings its peer: it keeps the stream open
 * through the peer's {@code quorumkv.http.read-timeout} (keep it well below that),
 * measures the peer's clock, and a missed one ends the stream
 * @param idleClose a stream that carried no operation for this long is closed
 * @param maxBackoff after failed attempts to open a stream, the longest wait before the
 * next (operations meanwhile fail at once); the wait ends early when the peer is known to
 * be up
 */
@ConfigurationProperties("quorumkv.cluster.stream")
public record StreamProperties(@DefaultValue("1MB") DataSize maxFrame, @DefaultValue("true") boolean localWrites,
		@DefaultValue("1s") Duration heartbeat, @DefaultValue("60s") Duration idleClose,
		@DefaultValue("1s") Duration maxBackoff) {

	public StreamProperties {
		if (maxFrame.toBytes() < 1024 || maxFrame.toBytes() > Integer.MAX_VALUE / 2) {
			throw new IllegalArgumentException("quorumkv.cluster.stream.max-frame must be 1KB..1GB");
		}
		Bounds.positive(heartbeat, "quorumkv.cluster.stream.heartbeat");
		Bounds.positive(idleClose, "quorumkv.cluster.stream.idle-close");
		Bounds.positive(maxBackoff, "quorumkv.cluster.stream.max-backoff");
	}

}
