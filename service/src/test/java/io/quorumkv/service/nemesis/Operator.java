package io.quorumkv.service.nemesis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.quorumkv.service.support.KvClient;
import org.jspecify.annotations.Nullable;

/**
 * The operator of the membership scenarios: asks a node for a join, a decommission or a
 * repair ({@code POST /actuator/quorumkv/<action>} with the test admin key), as steps of
 * the {@link Nemesis}'s plan so that faults land in the middle of them, and waits for the
 * ring to settle. A change refused under a fault (409: a participant it cannot reach, or
 * one still holding an aborted proposal) or left without an answer is asked again once
 * the faults are healed, until the ring shows it; a change agreed must finish. Every
 * outcome is noted ({@link #log}).
 */
final class Operator {

	private static final Pattern EPOCH = Pattern.compile("\"epoch\":(\\d+)");

	private final NemesisNodes nodes;

	private final KvClient client = new KvClient(Duration.ofSeconds(30));

	private final KvClient slow = new KvClient(Duration.ofMinutes(3));

	private final List<String> log = new CopyOnWriteArrayList<>();

	/** The change asked for and not yet seen in the ring, if any. */
	private @Nullable Change asked;

	/** The node a decommission takes out, retired once the ring has settled. */
	private @Nullable Integer leaving;

	private @Nullable CompletableFuture<KvClient.Answer> repair;

	private int repairing = -1;

	private long repairStarted;

	/**
	 * @param join a join, else a decommission
	 * @param node the node joining or leaving
	 * @param coordinator the node asked
	 */
	private record Change(boolean join, int node, int coordinator) {

		String action() {
			return this.join ? "join" : "decommission";
		}

		String describe() {
			return action() + " n" + this.node + " via n" + this.coordinator;
		}

	}

	Operator(NemesisNodes nodes) {
		this.nodes = nodes;
	}

	/** What happened to every change and repair, in order. */
	List<String> log() {
		return List.copyOf(this.log);
	}

	/**
	 * Asks {@code coordinator} to join the spare {@code node} (started first if it is not
	 * running).
	 */
	void join(int node, int coordinator) {
		if (!this.nodes.running(node)) {
			this.nodes.start(node);
		}
		ask(new Change(true, node, coordinator));
	}

	/** Asks {@code coordinator} to decommission {@code node}. */
	void decommission(int node, int coordinator) {
		this.leaving = node;
		ask(new Change(false, node, coordinator));
	}

	private void ask(Change change) {
		String before = ringOf(change.coordinator());
		KvClient.Answer answer = this.client.postAdmin(this.nodes.url(change.coordinator()),
				"/actuator/quorumkv/" + change.action(), "{\"url\":\"" + this.nodes.peerUrl(change.node()) + "\"}");
		String outcome = "";
		if (answer.status() != 200 && before != null) {
			// Refused: nothing may have changed (a clean abort).
			String after = ringOf(change.coordinator());
			outcome = (after == null) ? " (ring unknown)"
					: (epoch(after) == epoch(before) && !shows(after, change))
							? " (ring unchanged at epoch " + epoch(after) + ")"
							: " (the ring moved from epoch " + epoch(before) + " to " + epoch(after) + ")";
		}
		note(change.describe() + ": " + answer.status() + outcome + " " + shorten(answer.body()));
		if (answer.status() == 200) {
			this.asked = null;
			if (change.join()) {
				this.nodes.admit(change.node());
			}
		}
		else {
			this.asked = change;
		}
	}

	/**
	 * Once every fault is healed: asks again for a change refused or left without an
	 * answer (until the ring shows it), then waits until every member's ring is at one
	 * epoch with no node joining or leaving, and retires a decommissioned node.
	 * @return the epoch the ring settled at
	 * @throws IllegalStateException when the ring has not settled within {@code limit}
	 */
	long settle(Duration limit) {
		long start = System.nanoTime();
		long deadline = start + limit.toNanos();
		Change change = this.asked;
		for (int attempt = 0; change != null && System.nanoTime() < deadline && attempt < 200; attempt++) {
			String ring = ringOf(change.coordinator());
			if (ring != null && shows(ring, change)) {
				// Agreed though its answer was lost (or refused when asked again).
				note(change.describe() + ": in the ring after all");
				this.asked = null;
				if (change.join()) {
					this.nodes.admit(change.node());
				}
				break;
			}
			ask(change);
			if (this.asked == null) {
				break;
			}
			Pause.millis(1_000);
		}
		if (this.asked != null) {
			throw new IllegalStateException("ring stuck: " + this.asked.describe() + " still refused after "
					+ limit.toSeconds() + " s; " + this.log);
		}
		this.asked = null;
		String last = "";
		String first = null;
		for (int attempt = 0; System.nanoTime() < deadline && attempt < 1_000; attempt++) {
			List<String> rings = new ArrayList<>();
			long epoch = -1;
			boolean settled = true;
			Integer out = this.leaving;
			for (int node : this.nodes.members()) {
				if (out != null && node == out) {
					// Removed at the end, it need not answer with the ring.
					continue;
				}
				String ring = ringOf(node);
				rings.add("n" + node + ": " + ring);
				if (first == null && ring != null) {
					first = ring.contains("\"state\":\"joining\"") || ring.contains("\"state\":\"leaving\"")
							? "under way at epoch " + epoch(ring) : "done at epoch " + epoch(ring);
				}
				if (ring == null || ring.contains("\"state\":\"joining\"") || ring.contains("\"state\":\"leaving\"")) {
					settled = false;
					continue;
				}
				long its = epoch(ring);
				settled &= (epoch == -1 || epoch == its);
				epoch = its;
			}
			if (settled) {
				if (out != null) {
					this.nodes.retire(out);
					this.leaving = null;
				}
				note("settled at epoch " + epoch + " with members " + this.nodes.members() + " "
						+ (System.nanoTime() - start) / 1_000_000 + " ms after healing (the change was " + first
						+ " when healed)");
				return epoch;
			}
			last = String.join("; ", rings);
			Pause.millis(250);
		}
		throw new IllegalStateException("ring stuck: not settled " + limit.toSeconds() + " s after healing; last seen "
				+ last + "; " + this.log);
	}

	/** Whether the ring shows the change agreed (under way or done). */
	private boolean shows(String ring, Change change) {
		String url = "\"url\":\"" + this.nodes.peerUrl(change.node()) + "\",\"state\":\"";
		return change.join() ? ring.contains(url + "joining\"") || ring.contains(url + "normal\"")
				: ring.contains(url + "leaving\"") || ring.contains(url + "removed\"");
	}

	/** Asks {@code node} to repair every key it owns, in the background. */
	void startRepair(int node) {
		String url = this.nodes.url(node);
		this.repairing = node;
		this.repairStarted = System.nanoTime();
		this.repair = CompletableFuture.supplyAsync(() -> this.slow.postAdmin(url, "/actuator/quorumkv/repair", "{}"),
				(task) -> Thread.ofPlatform().name("nemesis-repair").daemon().start(task));
	}

	/**
	 * Waits for the repair's answer (bounded) and notes it.
	 * @return the answer: 200 with its report, 409 when refused, -1 without an answer
	 */
	KvClient.Answer awaitRepair(Duration limit) {
		CompletableFuture<KvClient.Answer> running = this.repair;
		if (running == null) {
			throw new IllegalStateException("no repair started");
		}
		this.repair = null;
		KvClient.Answer answer;
		try {
			answer = running.get(limit.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException("repair by n" + this.repairing + " without an answer after " + limit, ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		note("repair by n" + this.repairing + " (" + (System.nanoTime() - this.repairStarted) / 1_000_000 + " ms): "
				+ answer.status() + " " + shorten(answer.body()));
		return answer;
	}

	/** The ring a node answers ({@code GET /v0/ring}), or null. */
	@Nullable String ringOf(int node) {
		KvClient.Answer answer = this.client.getPath(this.nodes.url(node), "/v0/ring");
		return (answer.status() == 200) ? answer.body() : null;
	}

	static long epoch(String ring) {
		Matcher matcher = EPOCH.matcher(ring);
		if (!matcher.find()) {
			throw new IllegalStateException("no epoch in " + ring);
		}
		return Long.parseLong(matcher.group(1));
	}

	private void note(String line) {
		this.log.add(line);
		System.out.println("Operator: " + line);
	}

	private static String shorten(String body) {
		String flat = body.strip().replace('\n', ' ');
		return (flat.length() > 300) ? flat.substring(0, 300) + "..." : flat;
	}

}
