package io.quorumkv.client;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/** {@link Router#roundRobin()}: the healthy nodes in turn, then the nodes marked down. */
final class RoundRobinRouter implements Router {

	private final AtomicInteger next = new AtomicInteger();

	@Override
	public List<URI> plan(byte @Nullable [] key, NodeView nodes) {
		int turn = this.next.getAndIncrement();
		List<URI> plan = new ArrayList<>(nodes.healthy().size() + nodes.down().size());
		addRotated(plan, nodes.healthy(), turn);
		// With no healthy node the down ones take turns too, so that one of them that is
		// back up is found by the next requests, not only by the first of the list.
		addRotated(plan, nodes.down(), nodes.healthy().isEmpty() ? turn : 0);
		return plan;
	}

	private static void addRotated(List<URI> plan, List<URI> nodes, int turn) {
		// floorMod: the counter wraps to negative after 2^31 requests.
		int start = nodes.isEmpty() ? 0 : Math.floorMod(turn, nodes.size());
		for (int i = 0; i < nodes.size(); i++) {
			plan.add(nodes.get((start + i) % nodes.size()));
		}
	}

}
