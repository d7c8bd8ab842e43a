package io.quorumkv.client;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which nodes are up, as far as the client saw: a node is marked down for
 * {@code nodeDownTime} when a connection to it fails, and up again when it answers or the
 * time passes. It tracks the seeds and the nodes of the ring the client routes by
 * ({@link #track}), nothing else, so its map is bounded by them.
 */
final class NodeHealth {

	private final List<URI> seeds;

	private final long downNanos;

	// node -> System.nanoTime() until which it counts as down; absent when up.
	private final Map<URI, Long> downUntil = new ConcurrentHashMap<>();

	// The ring's nodes besides the seeds that may be marked down.
	private volatile Set<URI> ringNodes = Set.of();

	NodeHealth(List<URI> seeds, Duration downTime) {
		this.seeds = List.copyOf(seeds);
		this.downNanos = downTime.toNanos();
	}

	/** The seeds split by health, for a {@link Router}. */
	Router.NodeView view() {
		if (this.downUntil.isEmpty()) {
			return new Router.NodeView(this.seeds, List.of());
		}
		long now = System.nanoTime();
		List<URI> healthy = new ArrayList<>(this.seeds.size());
		List<URI> down = new ArrayList<>();
		for (URI seed : this.seeds) {
			(isDown(seed, now) ? down : healthy).add(seed);
		}
		return new Router.NodeView(healthy, down);
	}

	/** Whether a connection to {@code node} failed within {@code nodeDownTime}. */
	boolean isDown(URI node, long now) {
		Long until = this.downUntil.get(node);
		return until != null && until - now > 0;
	}

	/**
	 * From now on the nodes of this ring may be marked down too; marks of nodes neither
	 * in it nor seeds are dropped.
	 */
	void track(Set<URI> nodes) {
		this.ringNodes = Set.copyOf(nodes);
		this.downUntil.keySet().removeIf((node) -> !this.seeds.contains(node) && !nodes.contains(node));
	}

	void markDown(URI node) {
		if (this.seeds.contains(node) || this.ringNodes.contains(node)) {
			this.downUntil.put(node, System.nanoTime() + this.downNanos);
		}
	}

	void markUp(URI node) {
		if (!this.downUntil.isEmpty()) {
			this.downUntil.remove(node);
		}
	}

}
