package io.quorumkv.service.repair;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingLayout;
import org.jspecify.annotations.Nullable;

/**
 * Repair's ranges on the ring this node serves under ({@link ClusterState}): the token
 * space cut into {@code quorumkv.repair.ranges} slices whose replicas are the ring's
 * members. Rendezvous placement (and consistent hashing's many virtual nodes) spreads
 * every replica set over every slice, so each member owns some keys of each slice; which
 * keys is the ring's placement, asked per key ({@link #owners}). Slice {@code i}'s
 * primary, shown to operators, is the {@code i mod n}-th member in id order.
 *
 * <p>
 * A key's owners are its first RF nodes of the ring's placement; while a membership
 * change is under way they are the old owners (repair then refuses to run; tombstones are
 * judged by the owners of the ring their last repair ran under).
 */
final class RingRangeReplicas implements RangeReplicas {

	private final ClusterState cluster;

	private final List<TokenRange> slices;

	private volatile @Nullable Cached cached;

	RingRangeReplicas(ClusterState cluster, int rangeCount) {
		this.cluster = cluster;
		this.slices = TokenRange.split(rangeCount);
	}

	@Override
	public List<RepairRange> ranges() {
		RingLayout layout = this.cluster.layout();
		if (layout == null) {
			return List.of();
		}
		Cached current = this.cached;
		if (current == null || current.layout != layout) {
			current = new Cached(layout, build(layout));
			this.cached = current;
		}
		return current.ranges;
	}

	private List<RepairRange> build(RingLayout layout) {
		List<Node> members = new ArrayList<>(layout.ring().oldMembers());
		members.sort(Comparator.comparing(Node::id));
		List<RepairRange> ranges = new ArrayList<>(this.slices.size());
		for (int i = 0; i < this.slices.size(); i++) {
			ranges.add(new RepairRange(i, this.slices.get(i), members, members.get(i % members.size())));
		}
		return List.copyOf(ranges);
	}

	@Override
	public List<String> owners(byte[] key) {
		RingLayout layout = this.cluster.layout();
		if (layout == null) {
			return List.of();
		}
		List<Node> owners = layout.oldOwners(key);
		List<String> ids = new ArrayList<>(owners.size());
		owners.forEach((node) -> ids.add(node.id()));
		return ids;
	}

	@Override
	public RingState ring() {
		RingLayout layout = this.cluster.layout();
		return (layout != null) ? new RingState(layout.epoch(), layout.ring().change() != null)
				: new RingState(0, false);
	}

	/** The ranges of one layout, rebuilt when the ring changes. */
	private record Cached(RingLayout layout, List<RepairRange> ranges) {
	}

}
