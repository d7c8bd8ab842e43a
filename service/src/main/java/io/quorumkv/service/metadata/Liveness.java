package io.quorumkv.service.metadata;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The cluster's shared view of which nodes are up. The metadata group's leader hears from
 * every other member at each heartbeat (Ratis times each member's last answer); each
 * append it sends carries that view in a header ({@value #HEADER}: how many milliseconds
 * ago it last heard each member, {@code id=ms,id=ms}), so every member knows what the
 * leader knows within one heartbeat, with no message of its own. A node is up when it was
 * heard within {@code downAfter}, by the leader or as the leader.
 *
 * <p>
 * A node seen up again after it was down (or for the first time) is handed to
 * {@code cameUp}: this node's circuit breaker toward it closes, so a peer that returns is
 * called at once by every node, not when each breaker next lets a call through.
 *
 * <p>
 * Views only ever move a node's last-heard time forward: a deposed leader's older view
 * cannot mark down a node a newer one heard.
 */
public final class Liveness {

	/** The header of an append that carries the leader's view. */
	public static final String HEADER = "X-QuorumKV-Up";

	/** The longest view accepted (a malformed or hostile header is cut there). */
	static final int MAX_HEADER = 8 << 10;

	/** A leader's view is read from Ratis at most this often (each append carries it). */
	private static final long VIEW_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	private final long downAfterNanos;

	private final LongSupplier nanos;

	private final Consumer<String> cameUp;

	private final Map<String, Seen> seen = new ConcurrentHashMap<>();

	private volatile Supplier<Map<String, Long>> leaderView = Map::of;

	private volatile @Nullable Cached cached;

	/**
	 * @param downAfterMs a node not heard for this long is down
	 * @param nanos the monotonic clock ({@link System#nanoTime} but in tests)
	 * @param cameUp called with a node seen up after it was down or unseen
	 */
	Liveness(long downAfterMs, LongSupplier nanos, Consumer<String> cameUp) {
		this.downAfterNanos = TimeUnit.MILLISECONDS.toNanos(downAfterMs);
		this.nanos = nanos;
		this.cameUp = cameUp;
	}

	/**
	 * Where the leader's view is read: how many milliseconds ago each other member last
	 * answered this node, empty unless this node leads.
	 */
	void leaderViewFrom(Supplier<Map<String, Long>> view) {
		this.leaderView = view;
	}

	/**
	 * The header value an append of this node carries: its view as the leader (which it
	 * also learns itself), or null when it does not lead.
	 */
	@Nullable String header() {
		long now = this.nanos.getAsLong();
		Cached last = this.cached;
		if (last != null && now - last.atNanos() < VIEW_EVERY_NANOS) {
			return last.header();
		}
		Map<String, Long> view = this.leaderView.get();
		String header = null;
		if (!view.isEmpty()) {
			StringBuilder text = new StringBuilder();
			view.forEach((id, ms) -> {
				if (!text.isEmpty()) {
					text.append(',');
				}
				text.append(id).append('=').append(Math.max(0, ms));
				heard(id, ms, now, "self");
			});
			header = text.toString();
		}
		this.cached = new Cached(now, header);
		return header;
	}

	/**
	 * Learns the view an append of {@code leader} carried; the leader itself was heard
	 * now. Entries that are not {@code id=ms} are skipped.
	 */
	public void learn(String leader, @Nullable String header) {
		long now = this.nanos.getAsLong();
		heard(leader, 0, now, leader);
		if (header == null || header.length() > MAX_HEADER) {
			return;
		}
		for (String entry : header.split(",")) {
			int equals = entry.indexOf('=');
			if (equals <= 0 || equals == entry.length() - 1) {
				continue;
			}
			long ms;
			try {
				ms = Long.parseLong(entry, equals + 1, entry.length(), 10);
			}
			catch (NumberFormatException ex) {
				continue;
			}
			if (ms >= 0) {
				heard(entry.substring(0, equals), ms, now, leader);
			}
		}
	}

	private void heard(String id, long msAgo, long now, String via) {
		long at = now - TimeUnit.MILLISECONDS.toNanos(Math.min(msAgo, TimeUnit.DAYS.toMillis(365)));
		boolean[] cameBack = new boolean[1];
		this.seen.compute(id, (key, before) -> {
			long heard = (before == null) ? at : Math.max(before.heardNanos(), at);
			// Down is a matter of time alone (no view need say so): a node last heard
			// longer ago than the limit was down until now, whatever the last view said.
			boolean wasUp = before != null && now - before.heardNanos() < this.downAfterNanos;
			cameBack[0] = now - heard < this.downAfterNanos && !wasUp;
			return new Seen(heard, (before == null || at >= before.heardNanos()) ? via : before.via());
		});
		if (cameBack[0]) {
			this.cameUp.accept(id);
		}
	}

	/**
	 * What this node knows of {@code id}: {@code up}, {@code heardMsAgo} and {@code via}
	 * (the leader whose view said so, or {@code self} on the leader); null when it was
	 * never seen.
	 */
	public @Nullable Map<String, Object> of(String id) {
		// On the leader, the view as Ratis has it now (at most every 100 ms).
		header();
		Seen node = this.seen.get(id);
		if (node == null) {
			return null;
		}
		long ago = TimeUnit.NANOSECONDS.toMillis(this.nanos.getAsLong() - node.heardNanos());
		Map<String, Object> view = new LinkedHashMap<>();
		view.put("up", TimeUnit.MILLISECONDS.toNanos(ago) < this.downAfterNanos);
		view.put("heardMsAgo", ago);
		view.put("via", node.via());
		return view;
	}

	/**
	 * The last-heard time of a node, and by whose view.
	 */
	private record Seen(long heardNanos, String via) {
	}

	private record Cached(long atNanos, @Nullable String header) {
	}

}
