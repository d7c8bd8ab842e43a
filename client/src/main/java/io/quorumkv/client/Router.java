package io.quorumkv.client;

import java.net.URI;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Chooses the nodes a request goes to. For every request the client asks its router for a
 * plan, the nodes to try in order, and sends the first attempt to the plan's first node
 * and each retry ({@link RetryPolicy}) to the next one. Any QuorumKV node coordinates any
 * key, so every node is a correct choice; a router only decides which is the best one.
 *
 * <p>
 * {@link #roundRobin()} spreads requests over the healthy nodes in turn and puts the
 * nodes marked down (a connection to them failed within the last {@code nodeDownTime}) at
 * the end of the plan, so a request still reaches one of them when no healthy node is
 * left.
 *
 * <p>
 * The client's built-in routing ({@link QuorumKvClientBuilder#routing}) is replica-aware:
 * it reads the ring and sends a request to a replica of its key, and uses
 * {@link #roundRobin()} only while it has no ring and for scans. A router given to
 * {@link QuorumKvClientBuilder#router} replaces all of it: the client then reads no ring
 * and every request follows this router's plan.
 */
@FunctionalInterface
public interface Router {

	/**
	 * The nodes to try for one request, preferred first.
	 * @param key the key's UTF-8 bytes, or null for a request without a key (a scan)
	 * @param nodes the client's nodes, split by health
	 * @return a non-empty list of nodes from {@code nodes}; the client wraps around it
	 * when its retry policy allows more attempts than it has nodes
	 */
	List<URI> plan(byte @Nullable [] key, NodeView nodes);

	/** Round-robin over the healthy nodes, then the nodes marked down. */
	static Router roundRobin() {
		return new RoundRobinRouter();
	}

	/**
	 * The client's nodes as it sees them now.
	 *
	 * @param healthy nodes with no failed connection within {@code nodeDownTime}, in seed
	 * order
	 * @param down the others, in seed order
	 */
	record NodeView(List<URI> healthy, List<URI> down) {

		public NodeView {
			healthy = List.copyOf(healthy);
			down = List.copyOf(down);
		}

	}

}
