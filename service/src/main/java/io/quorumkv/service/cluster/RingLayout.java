package io.quorumkv.service.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A ring with its placements computed once: which nodes a request goes to. Immutable but
 * for the count of requests coordinated under it, which lets a node wait until they are
 * done before it acknowledges the next ring ({@link #inFlight()}).
 *
 * <p>
 * Reads go to the first {@code from} owners of the key (the old owners until handover,
 * then the new ones); a node whose copy may not be read yet ({@link Ring#readable}) is
 * marked so and counts as failed. Writes go to the old and the new owners together
 * ({@link Targets}).
 */
public final class RingLayout {

	private final Ring ring;

	private final Placement old;

	private final Placement next;

	private final boolean moving;

	private final AtomicInteger inFlight = new AtomicInteger();

	/** The layout of a ring (placements computed once). */
	public static RingLayout of(Ring ring) {
		return new RingLayout(ring);
	}

	RingLayout(Ring ring) {
		this.ring = ring;
		this.old = ring.strategy().create(ring.oldMembers(), ring.virtualNodes());
		List<Node> newMembers = ring.newMembers();
		this.moving = !ids(newMembers).equals(ids(ring.oldMembers()));
		this.next = this.moving ? ring.strategy().create(newMembers, ring.virtualNodes()) : this.old;
	}

	private static List<String> ids(List<Node> nodes) {
		return nodes.stream().map(Node::id).sorted().toList();
	}

	public Ring ring() {
		return this.ring;
	}

	public long epoch() {
		return this.ring.epoch();
	}

	public int replicationFactor() {
		return this.ring.replicationFactor();
	}

	/** The owners a read of {@code key} asks, and which of them may answer. */
	public Targets reads(byte[] key, int from) {
		List<Node> nodes = (this.ring.readsFromNew() ? this.next : this.old).replicas(key, from);
		boolean changing = this.ring.change() != null;
		byte[] flags = new byte[nodes.size()];
		for (int i = 0; i < flags.length; i++) {
			boolean readable = !changing || this.ring.readable(nodes.get(i).id());
			flags[i] = (byte) (Targets.OLD | Targets.NEW | (readable ? 0 : Targets.UNREADABLE));
		}
		return new Targets(nodes, flags, from);
	}

	/**
	 * The owners a write of {@code key} goes to: the first {@code from} old owners and
	 * the first {@code from} new ones (the same nodes outside a change).
	 */
	public Targets writes(byte[] key, int from) {
		List<Node> oldOwners = this.old.replicas(key, from);
		if (!this.moving) {
			byte[] flags = new byte[oldOwners.size()];
			java.util.Arrays.fill(flags, (byte) (Targets.OLD | Targets.NEW));
			return new Targets(oldOwners, flags, from);
		}
		List<Node> newOwners = this.next.replicas(key, from);
		List<Node> nodes = new ArrayList<>(oldOwners);
		for (Node node : newOwners) {
			if (!contains(oldOwners, node)) {
				nodes.add(node);
			}
		}
		byte[] flags = new byte[nodes.size()];
		for (int i = 0; i < flags.length; i++) {
			Node node = nodes.get(i);
			flags[i] = (byte) ((contains(oldOwners, node) ? Targets.OLD : 0)
					| (contains(newOwners, node) ? Targets.NEW : 0));
		}
		return new Targets(nodes, flags, from);
	}

	/** The first RF old owners of a key (where its data is before the change). */
	public List<Node> oldOwners(byte[] key) {
		return this.old.replicas(key, this.ring.replicationFactor());
	}

	/** The first RF new owners of a key (where its data is after the change). */
	public List<Node> newOwners(byte[] key) {
		return this.next.replicas(key, this.ring.replicationFactor());
	}

	/**
	 * Whether a node is among a key's first RF old owners ({@link #oldOwners}), without
	 * building the list.
	 */
	public boolean isOldOwner(byte[] key, String nodeId) {
		return this.old.isReplica(key, this.ring.replicationFactor(), nodeId);
	}

	/**
	 * Whether a node is among a key's first RF new owners ({@link #newOwners}), without
	 * building the list.
	 */
	public boolean isNewOwner(byte[] key, String nodeId) {
		return this.next.isReplica(key, this.ring.replicationFactor(), nodeId);
	}

	/** Whether a node holds a key under this ring, before or after its change. */
	public boolean owns(String nodeId, byte[] key) {
		return isOldOwner(key, nodeId) || (this.moving && isNewOwner(key, nodeId));
	}

	private static boolean contains(List<Node> nodes, Node node) {
		return contains(nodes, node.id());
	}

	static boolean contains(List<Node> nodes, String id) {
		for (Node candidate : nodes) {
			if (candidate.id().equals(id)) {
				return true;
			}
		}
		return false;
	}

	/** Requests coordinated under this ring that have not been decided yet. */
	public AtomicInteger inFlight() {
		return this.inFlight;
	}

	/**
	 * The nodes of one request and the role of each: bits {@link #OLD} and {@link #NEW}
	 * say whose owner it is, {@link #UNREADABLE} that a read may not use it.
	 *
	 * @param nodes the nodes to call, old owners first
	 * @param flags one per node
	 * @param from the request's {@code from}: the size of each owner group
	 */
	public record Targets(List<Node> nodes, byte[] flags, int from) {

		public static final int OLD = 1;

		public static final int NEW = 2;

		public static final int UNREADABLE = 4;

		public int size() {
			return this.nodes.size();
		}

		public boolean is(int index, int flag) {
			return (this.flags[index] & flag) != 0;
		}

	}

}
