package io.quorumkv.client;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which seeds are up, as far as the client saw: a node is marked down for
 * {@code nodeDownTime} when a connection to it fails, and up again when it answers or the
 * time passes. Its map holds the seeds only, so it never grows.
 */
final class NodeHealth {

	private final List<URI> seeds;

	private final long downNanos;

	// seed -> System.nanoTime() until which it counts as down; absent when up.
	private final Map<URI, Long> downUntil = new ConcurrentHashMap<>();

	NodeHealth(List<URI> seeds, Duration downTime) {
		this.seeds = List.copyOf(seeds);
		this.downNanos = downTime.toNanos();
	}

	Router.NodeView view() {
		if (this.downUntil.isEmpty()) {
			return new Router.NodeView(this.seeds, List.of());
		}
		long now = System.nanoTime();
		List<URI> healthy = new ArrayList<>(this.seeds.size());
		List<URI> down = new ArrayList<>();
		for (URI seed : this.seeds) {
			Long until = this.downUntil.get(seed);
			if (until != null && until - now > 0) {
				down.add(seed);
			}
			else {
				healthy.add(seed);
			}
		}
		return new Router.NodeView(healthy, down);
	}

	void markDown(URI node) {
		if (this.seeds.contains(node)) {
			this.downUntil.put(node, System.nanoTime() + this.downNanos);
		}
	}

	void markUp(URI node) {
		if (!this.downUntil.isEmpty()) {
			this.downUntil.remove(node);
		}
	}

}
