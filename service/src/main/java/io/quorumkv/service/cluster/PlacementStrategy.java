package io.quorumkv.service.cluster;

import java.util.List;

/**
 * The placement algorithms, as named by {@code quorumkv.cluster.placement}
 * ({@code rendezvous} or {@code consistent-hash}, bound as a
 * {@link ClusterProperties.PlacementSetting}).
 *
 * <pre>{@code
 * Placement placement = PlacementStrategy.CONSISTENT_HASH.create(nodes);
 * List<Node> replicas = placement.replicas(key, 3);
 * }</pre>
 *
 * Every node of a cluster must use the same strategy (and the same virtual-node count):
 * the two place keys differently.
 */
public enum PlacementStrategy {

	/** Rendezvous (highest random weight) hashing; no tuning, best balance. */
	RENDEZVOUS {
		@Override
		public Placement create(List<Node> nodes, int virtualNodes) {
			ConsistentHashPlacement.checkVirtualNodes(virtualNodes);
			return new RendezvousPlacement(nodes);
		}
	},

	/** Consistent hashing on a ring of virtual nodes. */
	CONSISTENT_HASH {
		@Override
		public Placement create(List<Node> nodes, int virtualNodes) {
			return new ConsistentHashPlacement(nodes, virtualNodes);
		}
	};

	/** The strategy {@code quorumkv.cluster.placement} names. */
	public static PlacementStrategy of(ClusterProperties.PlacementSetting setting) {
		return switch (setting) {
			case RENDEZVOUS -> RENDEZVOUS;
			case CONSISTENT_HASH -> CONSISTENT_HASH;
		};
	}

	/** Virtual nodes per node used by {@link #create(List)}. */
	public static final int DEFAULT_VIRTUAL_NODES = ConsistentHashPlacement.DEFAULT_VIRTUAL_NODES;

	/**
	 * A placement over {@code nodes} with {@link #DEFAULT_VIRTUAL_NODES}.
	 * @param nodes the cluster's nodes in any order; non-empty, no duplicate ids
	 * @throws IllegalArgumentException if the node list is empty or has a duplicate
	 */
	public Placement create(List<Node> nodes) {
		return create(nodes, DEFAULT_VIRTUAL_NODES);
	}

	/**
	 * A placement over {@code nodes}.
	 * @param nodes the cluster's nodes in any order; non-empty, no duplicate ids
	 * @param virtualNodes tokens per node for {@link #CONSISTENT_HASH}, {@code 1..65536};
	 * checked but unused by {@link #RENDEZVOUS}
	 * @throws IllegalArgumentException if an argument is out of range
	 */
	public abstract Placement create(List<Node> nodes, int virtualNodes);

}
