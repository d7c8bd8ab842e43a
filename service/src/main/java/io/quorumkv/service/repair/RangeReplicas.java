package io.quorumkv.service.repair;

import java.util.List;
import java.util.Optional;

import io.quorumkv.service.cluster.Node;

/**
 * The seam between repair and placement: the token ranges and, for each, the set of its
 * replicas. Repair only ever asks this, so it moves onto a versioned ring with a
 * replication factor by implementing it there (each ring range with its replica set)
 * instead of {@link StaticRangeReplicas}, today's placement where every node holds every
 * key.
 */
public interface RangeReplicas {

	/** Every range, in token order, covering the whole token space. */
	List<RepairRange> ranges();

	/** The ranges {@code node} holds a replica of. */
	default List<RepairRange> rangesOf(Node node) {
		return ranges().stream().filter((range) -> range.replicas().contains(node)).toList();
	}

	/** The range holding {@code token}. */
	default Optional<RepairRange> rangeOf(long token) {
		List<RepairRange> ranges = ranges();
		int low = 0;
		int high = ranges.size() - 1;
		while (low <= high) {
			int middle = (low + high) >>> 1;
			TokenRange tokens = ranges.get(middle).tokens();
			if (token < tokens.start()) {
				high = middle - 1;
			}
			else if (token > tokens.end()) {
				low = middle + 1;
			}
			else {
				return Optional.of(ranges.get(middle));
			}
		}
		return Optional.empty();
	}

}
