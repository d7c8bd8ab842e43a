package io.quorumkv.service.repair;

import java.util.BitSet;
import java.util.List;

import io.quorumkv.service.repair.RepairCodec.NodeRef;

/**
 * The leaves under some nodes of a set of trees: which entries a digest exchange is
 * about. A token matches when its tree's leaf is in the set.
 */
final class LeafSet {

	private final RangeTrees trees;

	private final BitSet[] leaves;

	LeafSet(RangeTrees trees) {
		this.trees = trees;
		this.leaves = new BitSet[trees.trees().size()];
	}

	static LeafSet of(RangeTrees trees, List<NodeRef> nodes) {
		LeafSet set = new LeafSet(trees);
		nodes.forEach(set::add);
		return set;
	}

	/** Adds the leaves under node {@code ref}. */
	void add(NodeRef ref) {
		if (ref.tree() < 0 || ref.tree() >= this.leaves.length) {
			throw new RepairCodec.MalformedRepairException("no tree " + ref.tree() + " in the session");
		}
		MerkleTree tree = this.trees.tree(ref.tree());
		int shift = tree.depth() - ref.level();
		if (ref.level() < 0 || shift < 0 || ref.index() < 0 || ref.index() >= 1 << ref.level()) {
			throw new RepairCodec.MalformedRepairException("no node " + ref + " in a tree of depth " + tree.depth());
		}
		leaves(ref.tree()).set(ref.index() << shift, (ref.index() + 1) << shift);
	}

	void addLeaf(int tree, int leaf) {
		leaves(tree).set(leaf);
	}

	boolean containsLeaf(int tree, int leaf) {
		BitSet set = this.leaves[tree];
		return set != null && set.get(leaf);
	}

	boolean matches(long token) {
		int tree = this.trees.find(token);
		return tree >= 0 && containsLeaf(tree, this.trees.tree(tree).leaf(token));
	}

	boolean isEmpty() {
		for (BitSet set : this.leaves) {
			if (set != null && !set.isEmpty()) {
				return false;
			}
		}
		return true;
	}

	/** This set's leaves as leaf-level nodes. */
	List<NodeRef> asLeaves() {
		java.util.ArrayList<NodeRef> refs = new java.util.ArrayList<>();
		for (int tree = 0; tree < this.leaves.length; tree++) {
			BitSet set = this.leaves[tree];
			if (set != null) {
				int depth = this.trees.tree(tree).depth();
				for (int leaf = set.nextSetBit(0); leaf >= 0; leaf = set.nextSetBit(leaf + 1)) {
					refs.add(new NodeRef(tree, depth, leaf));
				}
			}
		}
		return refs;
	}

	private BitSet leaves(int tree) {
		if (this.leaves[tree] == null) {
			this.leaves[tree] = new BitSet(1 << this.trees.tree(tree).depth());
		}
		return this.leaves[tree];
	}

}
