package io.quorumkv.service.nemesis;

import org.jspecify.annotations.Nullable;

/**
 * One completed client operation of a {@link History}.
 *
 * @param id the order of invocation in the history
 * @param client the client thread that ran it
 * @param kind what it did
 * @param key the key
 * @param value the value a PUT sent, or the body a GET answered 200 with; null otherwise
 * @param ack replicas that had to confirm ({@code ack} of {@code replicas=ack/from})
 * @param from replicas asked
 * @param node the node that coordinated it
 * @param invoked monotonic time ({@link System#nanoTime}) at invocation
 * @param completed monotonic time at completion (answer, failure or timeout)
 * @param status the HTTP status, or -1 when no answer came (timeout, connection lost)
 */
record Op(long id, int client, Kind kind, String key, @Nullable String value, int ack, int from, int node, long invoked,
		long completed, int status) {

	enum Kind {

		PUT, DELETE, GET

	}

	boolean isWrite() {
		return this.kind != Kind.GET;
	}

	/** A write the client was told succeeded (201, 202), or a GET answered 200 or 404. */
	boolean ok() {
		return switch (this.kind) {
			case PUT -> this.status == 201;
			case DELETE -> this.status == 202;
			case GET -> this.status == 200 || this.status == 404;
		};
	}

	@Override
	public String toString() {
		return "#" + this.id + " c" + this.client + " " + this.kind + " " + this.key
				+ ((this.value != null) ? "=" + this.value : "") + " " + this.ack + "/" + this.from + " via n"
				+ this.node + " -> " + this.status + " [" + this.invoked / 1_000_000 + ".." + this.completed / 1_000_000
				+ " ms]";
	}

}
