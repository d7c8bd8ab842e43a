package io.quorumkv.service.cluster;

import java.util.List;

/**
 * Where a key lives: for a key, the nodes that hold its replicas, in preference order.
 *
 * <p>
 * Implementations are deterministic: every node given the same node list (in any order)
 * answers the same replicas for the same key, so any node can coordinate any request.
 * They are immutable and thread-safe, built once per topology.
 *
 * <pre>{@code
 * Placement placement = PlacementStrategy.RENDEZVOUS.create(nodes);
 * List<Node> replicas = placement.replicas(key, 2);
 * }</pre>
 */
public interface Placement {

	/**
	 * The first {@code count} distinct nodes for {@code key}, most preferred first.
	 * @param key the key bytes
	 * @param count how many replicas, {@code 1 <= count <= nodes().size()}
	 */
	List<Node> replicas(byte[] key, int count);

	/**
	 * Whether the node {@code nodeId} is among the first {@code count} nodes for
	 * {@code key}: the same answer as searching {@link #replicas} for it. A node this
	 * placement does not know is not. Implementations may answer without building the
	 * list: a transfer's scan and a clean-up ask this of every entry they read.
	 * @param key the key bytes
	 * @param count how many replicas, {@code 1 <= count <= nodes().size()}
	 * @param nodeId a node's id
	 */
	default boolean isReplica(byte[] key, int count, String nodeId) {
		for (Node node : replicas(key, count)) {
			if (node.id().equals(nodeId)) {
				return true;
			}
		}
		return false;
	}

	/** The nodes this placement distributes over, in a canonical order. */
	List<Node> nodes();

}
