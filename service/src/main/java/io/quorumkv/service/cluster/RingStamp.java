package io.quorumkv.service.cluster;

import org.jspecify.annotations.Nullable;

/**
 * The ring a node serves under, as every internal call and every internal answer carries
 * it in one header ({@code X-QuorumKV-Ring}): {@code <epoch> <cluster id> <node id>
 * <node URL>}, separated by single spaces (none of them contains one). The receiver of a
 * call refuses another cluster, catches up when the sender is ahead, and refuses a data
 * call from a sender behind; the caller catches up when the answer is ahead.
 *
 * @param epoch the sender's epoch
 * @param clusterId the sender's cluster
 * @param nodeId the sender's node id
 * @param url the sender's base URL, where its ring can be fetched
 */
public record RingStamp(long epoch, String clusterId, String nodeId, String url) {

	static String format(Ring ring, Node self) {
		return ring.epoch() + " " + ring.clusterId() + " " + self.id() + " " + self.base();
	}

	/** The stamp of a header; null when absent or malformed. */
	public static @Nullable RingStamp parse(@Nullable String header) {
		if (header == null) {
			return null;
		}
		String[] parts = header.split(" ", -1);
		if (parts.length != 4) {
			return null;
		}
		try {
			return new RingStamp(Long.parseLong(parts[0]), parts[1], parts[2], parts[3]);
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/** The epoch of a header, read without parsing the rest; -1 when malformed. */
	public static long epochOf(String header) {
		int space = header.indexOf(' ');
		try {
			return Long.parseLong((space < 0) ? header : header.substring(0, space));
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	/** The sender as a node. */
	public Node node() {
		return Node.of(this.nodeId, this.url);
	}

}
