package io.quorumkv.service.repair;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.quorumkv.service.cluster.Node;

/**
 * Today's placement seen as ranges: the node list is fixed at start and every key lives
 * on every node (the default {@code from} is the cluster size), so each of
 * {@code quorumkv.repair.ranges} equal slices of the token space has every node as a
 * replica. Range {@code i}'s primary is the {@code i mod n}-th node in id order, so the
 * scheduled repairs of the nodes split the ranges between them.
 */
final class StaticRangeReplicas implements RangeReplicas {

	private final List<RepairRange> ranges;

	StaticRangeReplicas(List<Node> nodes, int rangeCount) {
		List<Node> sorted = new ArrayList<>(nodes);
		sorted.sort(Comparator.comparing(Node::id));
		List<TokenRange> tokens = TokenRange.split(rangeCount);
		List<RepairRange> ranges = new ArrayList<>(rangeCount);
		for (int i = 0; i < tokens.size(); i++) {
			ranges.add(new RepairRange(i, tokens.get(i), sorted, sorted.get(i % sorted.size())));
		}
		this.ranges = List.copyOf(ranges);
	}

	@Override
	public List<RepairRange> ranges() {
		return this.ranges;
	}

}
