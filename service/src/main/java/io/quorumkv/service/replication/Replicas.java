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

	/**
	 * The default of a request that names only {@code from} (or nothing: then
	 * {@code from} is every replica): acknowledged by a majority of them.
	 */
	public static Replicas quorum(int from) {
		return new Replicas(majority(from), from);
	}

	/** The majority of {@code from} replicas: the one place this rule is written. */
	public static int majority(int from) {
		return from / 2 + 1;
	}

	@Override
	public String toString() {
		return this.ack + "/" + this.from;
	}

}
