package io.quorumkv.service.repair;

/**
 * The hash tree of one token range: {@code 2^depth} leaves, each an equal slice of the
 * range, and above them a complete binary tree. A node's hash is the sum (two 64-bit
 * lanes, wrapping) of the version hashes of the entries in its slice, and its count their
 * number; a sum needs no order, so the tree is built from a storage scan in key order,
 * and a node's value is the sum of its children's. Equal hashes and counts mean equal
 * contents (a 128-bit collision aside); a node that differs has a child that differs.
 *
 * <p>
 * Layout: node {@code (level, index)}, {@code 0 <= index < 2^level}, is at
 * {@code 2^level - 1 + index} of three arrays; the leaves are level {@code depth}. Built
 * by one thread, then {@link #seal sealed} and read by any.
 */
final class MerkleTree {

	/** Deepest tree: 2^20 leaves, 48 MiB of arrays. */
	static final int MAX_DEPTH = 20;

	private final TokenRange range;

	private final int depth;

	private final long leafWidth;

	private final long[] high;

	private final long[] low;

	private final int[] counts;

	MerkleTree(TokenRange range, int depth) {
		if (depth < 0 || depth > MAX_DEPTH) {
			throw new IllegalArgumentException("tree depth must be 0.." + MAX_DEPTH + ", was " + depth);
		}
		this.range = range;
		this.depth = depth;
		this.leafWidth = Long.divideUnsigned(range.span(), 1L << depth) + 1;
		int nodes = (1 << (depth + 1)) - 1;
		this.high = new long[nodes];
		this.low = new long[nodes];
		this.counts = new int[nodes];
	}

	TokenRange range() {
		return this.range;
	}

	int depth() {
		return this.depth;
	}

	/** The leaf of a token of this range. */
	int leaf(long token) {
		return (int) Long.divideUnsigned(token - this.range.start(), this.leafWidth);
	}

	/** Whether a token of this range falls under node {@code (level, index)}. */
	boolean covers(int level, int index, long token) {
		return (leaf(token) >>> (this.depth - level)) == index;
	}

	void add(long token, long hashHigh, long hashLow) {
		int node = position(this.depth, leaf(token));
		this.high[node] += hashHigh;
		this.low[node] += hashLow;
		this.counts[node]++;
	}

	/** Computes the inner nodes from the leaves. */
	void seal() {
		for (int node = (1 << this.depth) - 2; node >= 0; node--) {
			int left = 2 * node + 1;
			this.high[node] = this.high[left] + this.high[left + 1];
			this.low[node] = this.low[left] + this.low[left + 1];
			this.counts[node] = this.counts[left] + this.counts[left + 1];
		}
	}

	NodeHash node(int level, int index) {
		if (level < 0 || level > this.depth || index < 0 || index >= 1 << level) {
			throw new IllegalArgumentException(
					"no node (" + level + ", " + index + ") in a tree of depth " + this.depth);
		}
		int node = position(level, index);
		return new NodeHash(this.high[node], this.low[node], this.counts[node]);
	}

	private static int position(int level, int index) {
		return (1 << level) - 1 + index;
	}

	/**
	 * A node's hash and count.
	 *
	 * @param high the hash sum's high lane
	 * @param low the hash sum's low lane
	 * @param count entries under the node
	 */
	record NodeHash(long high, long low, long count) {

		boolean sameAs(NodeHash other) {
			return this.high == other.high && this.low == other.low && this.count == other.count;
		}

	}

}
