package io.quorumkv.service.repair;

import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

import io.quorumkv.service.cluster.Node;

/**
 * The seam between repair and placement: the token ranges with their replicas, and who
 * owns each key. Repair only ever asks this ({@link RingRangeReplicas} answers from the
 * ring the node serves under).
 *
 * <p>
 * A range is a slice of the token space; its replicas are every node that owns some of
 * its keys. Placement need not map onto token ranges (rendezvous hashing places each key
 * on its own), so two replicas of a range hold different parts of it: a repair between
 * two nodes compares only the keys of the range that both own ({@link #shared}).
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

	/**
	 * The ids of the key's owners in placement order, the first its primary; empty while
	 * this node has no ring.
	 */
	List<String> owners(byte[] key);

	/**
	 * The keys a repair run by {@code repairer} in {@code scope} compares between
	 * {@code repairer} and {@code peer}: those both own, and of those, with
	 * {@link RepairService.Scope#PRIMARY}, only the ones {@code repairer} is the primary
	 * of. Both sides of a comparison build their trees with the same filter.
	 */
	default Predicate<byte[]> shared(String repairer, String peer, RepairService.Scope scope) {
		return (key) -> {
			List<String> owners = owners(key);
			return covers(owners, repairer, scope) && owners.contains(peer);
		};
	}

	/**
	 * Whether a repair of {@code repairer} in {@code scope} covers a key of these owners.
	 */
	static boolean covers(List<String> owners, String repairer, RepairService.Scope scope) {
		return (scope == RepairService.Scope.PRIMARY) ? !owners.isEmpty() && owners.get(0).equals(repairer)
				: owners.contains(repairer);
	}

	/**
	 * The epoch of the ring the answers are from, and whether a membership change is
	 * under way in it (repair refuses to run then).
	 */
	RingState ring();

	/**
	 * @param epoch the ring's epoch, 0 without a ring
	 * @param changing whether a membership change is under way
	 */
	record RingState(long epoch, boolean changing) {

		/** Why repair cannot run on this ring, or null when it can. */
		@org.jspecify.annotations.Nullable
		String refusal() {
			if (this.epoch == 0) {
				return "this node has no ring yet (it waits to be joined)";
			}
			return this.changing ? "a membership change is under way (ring epoch " + this.epoch
					+ "): repair runs again once it has finished" : null;
		}

	}

}
