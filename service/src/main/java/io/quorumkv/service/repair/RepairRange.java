package io.quorumkv.service.repair;

import java.util.List;
import java.util.Objects;

import io.quorumkv.service.cluster.Node;

/**
 * A range of the token space with the nodes that hold its replicas.
 *
 * @param index the range's number, stable while the ranges are (metrics, history)
 * @param tokens the range
 * @param replicas every node owning some key of the range, this node's included, in id
 * order
 * @param primary the replica shown to operators as the range's primary; scheduled repairs
 * go by each key's primary owner instead (the first of its owners on the ring)
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
