package io.quorumkv.service.cluster;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Consistent hashing on a ring of virtual nodes: a key goes to the first token at or
 * after its hash, then clockwise to the next distinct nodes.
 *
 * <p>
 * Node {@code i} places {@code virtualNodes} tokens at {@code XXH3(seed(i), v)} for
 * {@code v = 0..virtualNodes-1}; a key sits at {@code XXH3(key)}. Positions are compared
 * as signed longs, the ring wraps from the largest back to the smallest. Equal tokens (a
 * 2^-64 event) are ordered by the canonical node order, so the ring, and therefore every
 * answer, is the same whatever order the nodes were given in. Because the walk is one
 * fixed sequence, {@code replicas(key, k)} is a prefix of {@code replicas(key, n)}.
 *
 * <p>
 * Balance depends on the virtual-node count: the primary share of a node deviates from
 * the mean by roughly {@code 1/sqrt(virtualNodes)}; see {@code docs/placement.md} for
 * measured figures. Immutable and thread-safe.
 */
final class ConsistentHashPlacement implements Placement {

	/**
	 * Default virtual nodes per node: primary load within about 8% (one sigma) for 3–5
	 * nodes.
	 */
	static final int DEFAULT_VIRTUAL_NODES = 128;

	/**
	 * An upper bound that keeps the ring (12 bytes per token) far from memory trouble.
	 */
	static final int MAX_VIRTUAL_NODES = 65_536;

	/** At most this many tokens in all: 12 MiB of ring. */
	static final int MAX_RING_SIZE = 1 << 20;

	private final List<Node> nodes;

	private final int virtualNodes;

	/** Token positions, ascending. */
	private final long[] tokens;

	/** {@code owners[t]} is the index in {@link #nodes} of the node owning token t. */
	private final int[] owners;

	ConsistentHashPlacement(List<Node> nodes) {
		this(nodes, DEFAULT_VIRTUAL_NODES);
	}

	/**
	 * @param nodes the nodes, in any order; non-empty, no two with the same id
	 * @param virtualNodes tokens per node, {@code 1..65536}
	 */
	ConsistentHashPlacement(List<Node> nodes, int virtualNodes) {
		checkVirtualNodes(virtualNodes);
		this.nodes = PlacementSupport.canonicalNodes(nodes);
		this.virtualNodes = virtualNodes;
		int size = this.nodes.size();
		if ((long) size * virtualNodes > MAX_RING_SIZE) {
			throw new IllegalArgumentException("ring too large: " + size + " nodes * " + virtualNodes
					+ " virtual nodes exceeds " + MAX_RING_SIZE + " tokens");
		}
		int ringSize = size * virtualNodes;
		long[] unsortedTokens = new long[ringSize];
		Integer[] order = new Integer[ringSize];
		for (int node = 0; node < size; node++) {
			long seed = PlacementSupport.nodeSeed(this.nodes.get(node));
			for (int v = 0; v < virtualNodes; v++) {
				int t = node * virtualNodes + v;
				unsortedTokens[t] = PlacementSupport.mix(seed, v);
				order[t] = t;
			}
		}
		// Slots are numbered node-major, so the slot breaks ties by canonical node order.
		Arrays.sort(order, Comparator.<Integer>comparingLong((t) -> unsortedTokens[t]).thenComparingInt((t) -> t));
		this.tokens = new long[ringSize];
		this.owners = new int[ringSize];
		for (int i = 0; i < ringSize; i++) {
			this.tokens[i] = unsortedTokens[order[i]];
			this.owners[i] = order[i] / virtualNodes;
		}
	}

	static void checkVirtualNodes(int virtualNodes) {
		if (virtualNodes < 1 || virtualNodes > MAX_VIRTUAL_NODES) {
			throw new IllegalArgumentException(
					"virtual nodes per node must be between 1 and " + MAX_VIRTUAL_NODES + ", was " + virtualNodes);
		}
	}

	@Override
	public List<Node> replicas(byte[] key, int count) {
		int size = this.nodes.size();
		PlacementSupport.checkRequest(key, count, size);
		int t = firstTokenAtOrAfter(PlacementSupport.keyHash(key));
		if (count == 1) {
			return List.of(this.nodes.get(this.owners[t]));
		}
		boolean[] taken = new boolean[size];
		Node[] replicas = new Node[count];
		int found = 0;
		// Terminates: every node owns at least one token, and count <= size.
		while (found < count) {
			int owner = this.owners[t];
			if (!taken[owner]) {
				taken[owner] = true;
				replicas[found++] = this.nodes.get(owner);
			}
			t = (t + 1 == this.tokens.length) ? 0 : t + 1;
		}
		return List.of(replicas);
	}

	/**
	 * The lowest index whose token is {@code >= position}, wrapping to 0 past the end.
	 */
	private int firstTokenAtOrAfter(long position) {
		int low = 0;
		int high = this.tokens.length;
		while (low < high) {
			int mid = (low + high) >>> 1;
			if (this.tokens[mid] < position) {
				low = mid + 1;
			}
			else {
				high = mid;
			}
		}
		return (low == this.tokens.length) ? 0 : low;
	}

	@Override
	public List<Node> nodes() {
		return this.nodes;
	}

	int virtualNodes() {
		return this.virtualNodes;
	}

	@Override
	public String toString() {
		return "ConsistentHashPlacement(" + this.virtualNodes + " virtual nodes)" + this.nodes;
	}

}
