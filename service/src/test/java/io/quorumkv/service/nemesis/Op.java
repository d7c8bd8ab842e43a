package io.quorumkv.service.nemesis;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One completed client operation of a {@link History}.
 *
 * @param id the order of invocation in the history
 * @param client the client thread that ran it
 * @param kind what it did
 * @param key the key (of a {@link Kind#SCAN} page: its lower bound; of a scan's
 * observation: the key observed)
 * @param value the value a PUT sent, or the body a GET answered 200 with; null otherwise
 * @param ack replicas that had to confirm ({@code ack} of {@code replicas=ack/from})
 * @param from replicas asked
 * @param node the node that coordinated it
 * @param invoked monotonic time ({@link System#nanoTime}) at invocation
 * @param completed monotonic time at completion (answer, failure or timeout)
 * @param status the HTTP status, or -1 when no answer came (timeout, connection lost)
 * @param version the version a read answered (its {@code ETag} unquoted: the winning
 * write's timestamp in hexadecimal), else null
 * @param ttlSeconds the {@code ttl} a PUT sent, 0 for none
 * @param ifNoneMatch the version a conditional GET sent as {@code If-None-Match}, else
 * null
 * @param page what a {@link Kind#SCAN} page asked and got, else null
 */
record Op(long id, int client, Kind kind, String key, @Nullable String value, int ack, int from, int node, long invoked,
		long completed, int status, @Nullable String version, long ttlSeconds, @Nullable String ifNoneMatch,
		@Nullable Page page) {

	enum Kind {

		PUT, DELETE, GET, SCAN

	}

	/**
	 * A page of a range read: {@code GET /v0/entities} from {@code key} (inclusive, or
	 * exclusive when {@code after}) to {@code end} (exclusive), at most {@code limit}
	 * records.
	 *
	 * @param after whether the lower bound is exclusive (the last key of the page before)
	 * @param end the upper bound, exclusive
	 * @param limit the most records asked for
	 * @param records what came, in key order (empty unless answered 200)
	 */
	record Page(boolean after, String end, int limit, List<Record> records) {

		Page {
			records = List.copyOf(records);
		}

		/**
		 * Whether the page speaks for {@code key}: in its bounds, and not past its last
		 * record when it is full (the next page speaks for those).
		 */
		boolean covers(String lower, String key) {
			int low = key.compareTo(lower);
			if (low < 0 || (low == 0 && this.after) || key.compareTo(this.end) >= 0) {
				return false;
			}
			return this.records.size() < this.limit || key.compareTo(this.records.getLast().key()) <= 0;
		}

	}

	/** One record of a page: a key, its value and its version. */
	record Record(String key, String value, String version) {

	}

	/** An operation without a version, a ttl, a condition or a page. */
	Op(long id, int client, Kind kind, String key, @Nullable String value, int ack, int from, int node, long invoked,
			long completed, int status) {
		this(id, client, kind, key, value, ack, from, node, invoked, completed, status, null, 0, null, null);
	}

	boolean isWrite() {
		return this.kind == Kind.PUT || this.kind == Kind.DELETE;
	}

	/**
	 * A read of one key: a GET, or one key's observation of a scan page (a page itself
	 * has a {@link #page}).
	 */
	boolean isKeyRead() {
		return this.kind == Kind.GET || (this.kind == Kind.SCAN && this.page == null);
	}

	/**
	 * A write the client was told succeeded (201, 202), a GET answered 200, 304 or 404, a
	 * page answered 200.
	 */
	boolean ok() {
		return switch (this.kind) {
			case PUT -> this.status == 201;
			case DELETE -> this.status == 202;
			case GET -> this.status == 200 || this.status == 304 || this.status == 404;
			case SCAN -> this.status == 200 || (this.page == null && this.status == 404);
		};
	}

	@Override
	public String toString() {
		String detail = ((this.value != null) ? "=" + this.value : "")
				+ ((this.version != null) ? " v" + this.version : "")
				+ ((this.ttlSeconds > 0) ? " ttl " + this.ttlSeconds + " s" : "")
				+ ((this.ifNoneMatch != null) ? " if-none-match v" + this.ifNoneMatch : "")
				+ ((this.page != null) ? " " + (this.page.after() ? "after" : "from") + " .. " + this.page.end()
						+ " limit " + this.page.limit() + ": " + this.page.records().size() + " records" : "");
		return "#" + this.id + " c" + this.client + " " + this.kind + " " + this.key + detail + " " + this.ack + "/"
				+ this.from + " via n" + this.node + " -> " + this.status + " [" + this.invoked / 1_000_000 + ".."
				+ this.completed / 1_000_000 + " ms]";
	}

}
