package io.quorumkv.service.cluster;

import java.util.List;

/**
 * Rendezvous (highest random weight) hashing: every node scores the key, the highest
 * scores win.
 *
 * <p>
 * {@code score(node, key) = XXH3(seed(node), XXH3(key))}, where the seed is the hash of
 * the node's id, computed once here. The key is hashed once per call; each node then
 * costs one 16-byte hash. Ties (a 2^-64 event) go to the node first in the canonical
 * order, so the answer is a total order and {@code replicas(key, k)} is always a prefix
 * of {@code replicas(key, n)} for {@code k < n}.
 *
 * <p>
 * Adding a node moves to it exactly the keys it now outscores everyone on (about
 * {@code 1/(n+1)}); removing a node moves only its keys. Immutable and thread-safe.
 */
final class RendezvousPlacement implements Placement {

	private final List<Node> nodes;

	private final long[] seeds;

	/**
	 * @param nodes the nodes, in any order; non-empty, no two with the same id
	 */
	RendezvousPlacement(List<Node> nodes) {
		this.nodes = PlacementSupport.canonicalNodes(nodes);
		this.seeds = new long[this.nodes.size()];
		for (int i = 0; i < this.seeds.length; i++) {
			this.seeds[i] = PlacementSupport.nodeSeed(this.nodes.get(i));
		}
	}

	@Override
	public List<Node> replicas(byte[] key, int count) {
		int size = this.seeds.length;
		PlacementSupport.checkRequest(key, count, size);
		long keyHash = PlacementSupport.keyHash(key);
		if (count == 1) {
			return List.of(this.nodes.get(best(keyHash)));
		}
		long[] scores = new long[size];
		for (int i = 0; i < size; i++) {
			scores[i] = score(i, keyHash);
		}
		// Partial selection sort: count rounds over a handful of nodes beats sorting.
		boolean[] taken = new boolean[size];
		Node[] replicas = new Node[count];
		for (int r = 0; r < count; r++) {
			int winner = -1;
			for (int i = 0; i < size; i++) {
				if (!taken[i] && (winner < 0 || scores[i] > scores[winner])) {
					winner = i;
				}
			}
			taken[winner] = true;
			replicas[r] = this.nodes.get(winner);
		}
		return List.of(replicas);
	}

	/**
	 * Without building the list: the node is a replica when fewer than {@code count}
	 * nodes outscore it, a tie counting against the node later in the canonical order
	 * (the selection's rule).
	 */
	@Override
	public boolean isReplica(byte[] key, int count, String nodeId) {
		int size = this.seeds.length;
		PlacementSupport.checkRequest(key, count, size);
		int self = indexOf(nodeId);
		if (self < 0) {
			return false;
		}
		long keyHash = PlacementSupport.keyHash(key);
		long mine = score(self, keyHash);
		int ahead = 0;
		for (int i = 0; i < size && ahead < count; i++) {
			long other = score(i, keyHash);
			if (other > mine || (other == mine && i < self)) {
				ahead++;
			}
		}
		return ahead < count;
	}

	private int indexOf(String nodeId) {
		for (int i = 0; i < this.nodes.size(); i++) {
			if (this.nodes.get(i).id().equals(nodeId)) {
				return i;
			}
		}
		return -1;
	}

	/** The primary without any allocation; same tie rule as the selection above. */
	private int best(long keyHash) {
		int winner = 0;
		long top = score(0, keyHash);
		for (int i = 1; i < this.seeds.length; i++) {
			long s = score(i, keyHash);
			if (s > top) {
				top = s;
				winner = i;
			}
		}
		return winner;
	}

	private long score(int node, long keyHash) {
		return PlacementSupport.mix(this.seeds[node], keyHash);
	}

	@Override
	public List<Node> nodes() {
		return this.nodes;
	}

	@Override
	public String toString() {
		return "RendezvousPlacement" + this.nodes;
	}

}
