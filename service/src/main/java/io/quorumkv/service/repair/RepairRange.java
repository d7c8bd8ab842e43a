package io.quorumkv.service.repair;

import java.util.List;
import java.util.Objects;

import io.quorumkv.service.cluster.Node;

/**
 * A range of the token space with the nodes that hold its replicas.
 *
 * @param index the range's number, stable while the ranges are (metrics, history)
 * @param tokens the range
 * @param replicas every replica of the range, this node's included, in placement order
 * @param primary the replica that repairs the range on its schedule (one per range, so
 * that scheduled repairs cover each range once)
 */
public record RepairRange(int index, TokenRange tokens, List<Node> replicas, Node primary) {

	public RepairRange {
		Objects.requireNonNull(tokens, "tokens");
		replicas = List.copyOf(replicas);
		if (!replicas.contains(primary)) {
			throw new IllegalArgumentException("the primary " + primary + " is not a replica of " + tokens);
		}
	}

}
