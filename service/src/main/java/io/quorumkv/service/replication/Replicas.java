package io.quorumkv.service.replication;

/**
 * How many replicas a request goes to ({@code from}) and how many must confirm it
 * ({@code ack}).
 *
 * @param ack confirmations needed for success, {@code 1 <= ack <= from}
 * @param from replicas the request goes to
 */
public record Replicas(int ack, int from) {

	public Replicas {
		if (ack < 1 || ack > from) {
			throw new IllegalArgumentException("need 1 <= ack <= from, got " + ack + "/" + from);
		}
	}

	/** The default for a cluster: every node, acknowledged by a majority. */
	public static Replicas quorum(int clusterSize) {
		return new Replicas(clusterSize / 2 + 1, clusterSize);
	}

	@Override
	public String toString() {
		return this.ack + "/" + this.from;
	}

}
