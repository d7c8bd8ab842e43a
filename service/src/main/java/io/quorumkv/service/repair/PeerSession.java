package io.quorumkv.service.repair;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.repair.MerkleTree.NodeHash;
import io.quorumkv.service.repair.RepairCodec.NodeRef;
import org.jspecify.annotations.Nullable;

/**
 * One peer's part in a repair: which of the repair's ranges it holds (and their numbers
 * in its session), its roots, the leaves where it differs from this node, and the first
 * failure that took it out.
 */
final class PeerSession {

	final Node node;

	/** For each of this node's trees, the peer's tree number, or -1. */
	private final int[] peerTree;

	/** The peer's trees, as this node's tree numbers. */
	final List<Integer> localTrees;

	/** The leaves where the peer differs from this node, in this node's numbering. */
	private @Nullable LeafSet differing;

	final boolean[] differed;

	volatile @Nullable List<NodeHash> roots;

	/** This node's trees of the keys it shares with the peer, once built. */
	volatile @Nullable RangeTrees local;

	private volatile @Nullable String failure;

	PeerSession(Node node, List<RepairRange> ranges) {
		this.node = node;
		this.peerTree = new int[ranges.size()];
		Arrays.fill(this.peerTree, -1);
		List<Integer> trees = new ArrayList<>();
		for (int i = 0; i < ranges.size(); i++) {
			if (ranges.get(i).replicas().contains(node)) {
				this.peerTree[i] = trees.size();
				trees.add(i);
			}
		}
		this.localTrees = List.copyOf(trees);
		this.differed = new boolean[ranges.size()];
	}

	/**
	 * Per tree, the peer's entries per leaf as far as known (their count where the
	 * descent stopped, spread evenly).
	 */
	private final java.util.Map<Integer, int[]> estimates = new java.util.concurrent.ConcurrentHashMap<>();

	/** Records that the peer holds {@code count} entries under a differing node. */
	void estimate(NodeRef ref, int depth, long count) {
		int shift = depth - ref.level();
		int[] leaves = this.estimates.computeIfAbsent(ref.tree(), (tree) -> new int[1 << depth]);
		int each = (int) Math.min(Integer.MAX_VALUE, (count + (1L << shift) - 1) >> shift);
		for (int leaf = ref.index() << shift; leaf < (ref.index() + 1) << shift; leaf++) {
			leaves[leaf] = Math.max(leaves[leaf], each);
		}
	}

	/** The peer's estimated entries in a leaf (0 when unknown). */
	int estimate(int tree, int leaf) {
		int[] leaves = this.estimates.get(tree);
		return (leaves != null) ? leaves[leaf] : 0;
	}

	/** Called once this node's trees are built, before the descent. */
	synchronized LeafSet differing(RangeTrees local) {
		if (this.differing == null) {
			this.differing = new LeafSet(local);
		}
		return this.differing;
	}

	/** The leaves where the peer differs; empty before the descent. */
	synchronized @Nullable LeafSet differingLeaves() {
		return this.differing;
	}

	boolean holds(int localTree) {
		return this.peerTree[localTree] >= 0;
	}

	/** A node of this node's tree numbering, in the peer's. */
	NodeRef toPeer(NodeRef local) {
		return new NodeRef(this.peerTree[local.tree()], local.level(), local.index());
	}

	void fail(String why) {
		if (this.failure == null) {
			this.failure = why;
		}
	}

	@Nullable String failure() {
		return this.failure;
	}

	boolean failed() {
		return this.failure != null;
	}

}
