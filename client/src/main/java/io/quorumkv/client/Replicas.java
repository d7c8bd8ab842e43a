package io.quorumkv.client;

/**
 * The consistency of one request: the answer comes when {@code ack} of the key's first
 * {@code from} replicas confirmed ({@code replicas=ack/from} on the wire). Reads and
 * writes whose quorums overlap ({@code ack(read) + ack(write) > from}) always see each
 * other.
 *
 * <pre>{@code
 * client.put("user:42", bytes, Replicas.of(2, 3));
 * }</pre>
 *
 * Whether {@code from} fits the cluster (at most its replication factor) only the server
 * knows: a {@code from} too large is answered 400 ({@link BadRequestException}).
 *
 * @param ack replicas that must confirm, at least one
 * @param from replicas asked, at least {@code ack}
 */
public record Replicas(int ack, int from) {

	public Replicas {
		if (ack < 1) {
			throw new IllegalArgumentException("ack must be at least 1, not " + ack);
		}
		if (ack > from) {
			throw new IllegalArgumentException("ack (" + ack + ") must not exceed from (" + from + ")");
		}
	}

	/** {@code ack} of {@code from}. */
	public static Replicas of(int ack, int from) {
		return new Replicas(ack, from);
	}

	/**
	 * A majority of {@code from}: {@code from / 2 + 1}, what the server picks by default.
	 */
	public static Replicas majorityOf(int from) {
		return new Replicas(from / 2 + 1, from);
	}

	/** The query value, {@code ack/from}. */
	String queryValue() {
		return this.ack + "/" + this.from;
	}

}
