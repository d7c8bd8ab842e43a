package io.quorumkv.service.cluster;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import io.quorumkv.service.cluster.RingChange.Kind;
import io.quorumkv.service.cluster.RingChange.Phase;
import org.jspecify.annotations.Nullable;

/**
 * The cluster's membership and placement as one versioned value (DESIGN §4): every node
 * holds it durably ({@link RingFile}), and it changes only by agreement, one epoch at a
 * time. Immutable; the transitions return a new ring one epoch later and check their
 * preconditions.
 *
 * <p>
 * A key's <em>old owners</em> are the first RF of its placement over the old members
 * (normal and leaving nodes, and the node whose place a replacement takes); its <em>new
 * owners</em> the first RF over the new members (normal and joining nodes). Outside a
 * change both are the same nodes.
 *
 * @param clusterId the cluster's id: a node of another cluster is refused
 * @param epoch the version, 1 for a seeded ring, one more for each agreed change
 * @param replicationFactor nodes that hold each key
 * @param strategy the placement algorithm
 * @param virtualNodes virtual nodes per node of {@link PlacementStrategy#CONSISTENT_HASH}
 * @param nodes every node, removed ones included, in the order they were added
 * @param change the change under way, or null
 * @param generation the metadata group the ring belongs to, and the voters it keeps out
 * ({@link GroupGeneration})
 */
public record Ring(String clusterId, long epoch, int replicationFactor, PlacementStrategy strategy, int virtualNodes,
		List<RingNode> nodes, @Nullable RingChange change, GroupGeneration generation) {

	public Ring {
		Objects.requireNonNull(clusterId, "clusterId");
		Objects.requireNonNull(strategy, "strategy");
		Objects.requireNonNull(generation, "generation");
		nodes = List.copyOf(nodes);
		if (!clusterId.matches("[A-Za-z0-9._-]{1,128}")) {
			throw new IllegalArgumentException(
					"a cluster id must be 1 to 128 letters, digits, '.', '_' or '-', was '" + clusterId + "'");
		}
		if (epoch < 1) {
			throw new IllegalArgumentException("a ring's epoch is at least 1, was " + epoch);
		}
		ConsistentHashPlacement.checkVirtualNodes(virtualNodes);
		Set<String> ids = new HashSet<>();
		Set<URI> urls = new HashSet<>();
		for (RingNode node : nodes) {
			if (!ids.add(node.id())) {
				throw new IllegalArgumentException("the ring lists node " + node.id() + " twice");
			}
			if (node.state() != NodeState.REMOVED && !urls.add(node.url())) {
				throw new IllegalArgumentException("two nodes of the ring have the URL " + node.url());
			}
		}
		if (change != null && !ids.contains(change.nodeId())) {
			throw new IllegalArgumentException("the change names node " + change.nodeId() + ", not in the ring");
		}
		int members = Math.min(members(nodes, change, true).size(), members(nodes, change, false).size());
		if (replicationFactor < 1 || replicationFactor > members) {
			throw new IllegalArgumentException("replication factor " + replicationFactor + " needs 1 to " + members
					+ " member nodes (a change may not leave fewer nodes than the replication factor)");
		}
		if (change == null
				&& nodes.stream().anyMatch((n) -> n.state() == NodeState.JOINING || n.state() == NodeState.LEAVING)) {
			throw new IllegalArgumentException("a node is joining or leaving, but no change is under way");
		}
	}

	/** A ring of the first metadata group generation. */
	public Ring(String clusterId, long epoch, int replicationFactor, PlacementStrategy strategy, int virtualNodes,
			List<RingNode> nodes, @Nullable RingChange change) {
		this(clusterId, epoch, replicationFactor, strategy, virtualNodes, nodes, change, GroupGeneration.FIRST);
	}

	/** The ring a cluster starts with: every seed node normal, epoch 1. */
	public static Ring seed(String clusterId, List<Node> seeds, int replicationFactor, PlacementStrategy strategy,
			int virtualNodes) {
		List<RingNode> nodes = seeds.stream().map((n) -> new RingNode(n.id(), n.url(), NodeState.NORMAL)).toList();
		return new Ring(clusterId, 1, replicationFactor, strategy, virtualNodes, nodes, null);
	}

	/** The nodes keys are placed on before the change (every member outside one). */
	public List<Node> oldMembers() {
		return members(this.nodes, this.change, true);
	}

	/** The nodes keys are placed on after the change. */
	public List<Node> newMembers() {
		return members(this.nodes, this.change, false);
	}

	private static List<Node> members(List<RingNode> nodes, @Nullable RingChange change, boolean old) {
		List<Node> members = new ArrayList<>();
		for (RingNode node : nodes) {
			boolean member = switch (node.state()) {
				case NORMAL -> true;
				case LEAVING -> old;
				case JOINING ->
					!old || (change != null && change.kind() == Kind.REPLACE && change.nodeId().equals(node.id()));
				case REMOVED -> false;
			};
			if (member) {
				members.add(node.node());
			}
		}
		return members;
	}

	public Optional<RingNode> node(String id) {
		// A loop, not a stream: every request looks its node up (ReplicationService).
		for (RingNode node : this.nodes) {
			if (node.id().equals(id)) {
				return Optional.of(node);
			}
		}
		return Optional.empty();
	}

	/** Whether the node is in the ring and not removed. */
	public boolean isMember(String id) {
		return node(id).map((node) -> node.state() != NodeState.REMOVED).orElse(false);
	}

	/** Whether reads go to the new owners (the handover phase of a change). */
	public boolean readsFromNew() {
		return this.change != null && this.change.phase() == Phase.HANDOVER;
	}

	/**
	 * Whether a read may use the node's copy: a joining node's only once its data is
	 * handed over, a leaving one's only until then.
	 */
	public boolean readable(String id) {
		NodeState state = node(id).map(RingNode::state).orElse(NodeState.REMOVED);
		return switch (state) {
			case NORMAL -> true;
			case JOINING -> readsFromNew();
			case LEAVING -> !readsFromNew();
			case REMOVED -> false;
		};
	}

	/**
	 * The nodes that take part in agreeing on the next ring: members not declared dead.
	 */
	public List<Node> participants() {
		List<Node> participants = new ArrayList<>();
		for (RingNode node : this.nodes) {
			if (node.state() != NodeState.REMOVED && (this.change == null || !this.change.declaresDead(node.id()))) {
				participants.add(node.node());
			}
		}
		return participants;
	}

	// --- transitions: each returns the ring one epoch later
	// -----------------------------

	/** Starts adding a node: it joins, and pulls its share of the keys. */
	public Ring join(Node newcomer, String changeId, String coordinator) {
		requireNoChange();
		if (node(newcomer.id()).isPresent()) {
			throw new IllegalArgumentException("node " + newcomer.id() + " is already in the ring");
		}
		requireFreeUrl(newcomer.url());
		List<RingNode> next = new ArrayList<>(this.nodes);
		next.add(new RingNode(newcomer.id(), newcomer.url(), NodeState.JOINING));
		return next(next, new RingChange(changeId, Kind.JOIN, newcomer.id(), coordinator, Phase.STREAMING));
	}

	/** Starts taking a live node out: it streams its keys to their new owners. */
	public Ring decommission(String id, String changeId, String coordinator) {
		return leave(id, Kind.DECOMMISSION, changeId, coordinator);
	}

	/** Starts taking a dead node out: the survivors re-create its copies. */
	public Ring remove(String id, String changeId, String coordinator) {
		return leave(id, Kind.REMOVE, changeId, coordinator);
	}

	private Ring leave(String id, Kind kind, String changeId, String coordinator) {
		requireNoChange();
		requireNormal(id);
		return next(withState(id, NodeState.LEAVING, null),
				new RingChange(changeId, kind, id, coordinator, Phase.STREAMING));
	}

	/**
	 * Starts replacing a dead node: the new node at {@code url} takes the dead one's id,
	 * so its place, and pulls its keys from the surviving replicas.
	 */
	public Ring replace(String deadId, URI url, String changeId, String coordinator) {
		requireNoChange();
		requireNormal(deadId);
		URI canonical = Node.canonical(url);
		requireFreeUrl(canonical);
		return next(withState(deadId, NodeState.JOINING, canonical),
				new RingChange(changeId, Kind.REPLACE, deadId, coordinator, Phase.STREAMING));
	}

	/** The next step of the change under way: handover, then the change's end. */
	public Ring advance() {
		RingChange current = this.change;
		if (current == null) {
			throw new IllegalStateException("no change under way");
		}
		if (current.phase() == Phase.STREAMING) {
			return next(this.nodes, current.withPhase(Phase.HANDOVER));
		}
		List<RingNode> finished = new ArrayList<>();
		for (RingNode node : this.nodes) {
			finished.add(switch (node.state()) {
				case JOINING -> node.withState(NodeState.NORMAL);
				case LEAVING -> node.withState(NodeState.REMOVED);
				default -> node;
			});
		}
		return next(finished, null);
	}

	/**
	 * A forced reconfiguration: the same ring one epoch later in the next metadata group
	 * generation, which fences the voters {@code lostIds} (and keeps fencing those fenced
	 * before and still listed); the change under way, if any, goes on.
	 */
	public Ring forceGeneration(List<String> lostIds) {
		List<RingNode> lost = new ArrayList<>();
		for (String id : lostIds) {
			lost.add(node(id).orElseThrow(() -> new IllegalArgumentException("no node " + id + " in the ring")));
		}
		return new Ring(this.clusterId, this.epoch + 1, this.replicationFactor, this.strategy, this.virtualNodes,
				this.nodes, this.change, this.generation.next(this.nodes, lost));
	}

	private Ring next(List<RingNode> nodes, @Nullable RingChange next) {
		return new Ring(this.clusterId, this.epoch + 1, this.replicationFactor, this.strategy, this.virtualNodes, nodes,
				next, this.generation);
	}

	private List<RingNode> withState(String id, NodeState state, @Nullable URI url) {
		List<RingNode> next = new ArrayList<>();
		for (RingNode node : this.nodes) {
			next.add(node.id().equals(id) ? new RingNode(id, (url != null) ? url : node.url(), state) : node);
		}
		return next;
	}

	private void requireNoChange() {
		if (this.change != null) {
			throw new IllegalStateException("a change is under way (" + this.change.kind().label() + " of "
					+ this.change.nodeId() + ", " + this.change.phase().label() + "): one change at a time");
		}
	}

	private void requireNormal(String id) {
		RingNode node = node(id).orElseThrow(() -> new IllegalArgumentException("no node " + id + " in the ring"));
		if (node.state() != NodeState.NORMAL) {
			throw new IllegalArgumentException("node " + id + " is " + node.state().label() + ", not normal");
		}
	}

	private void requireFreeUrl(URI url) {
		for (RingNode node : this.nodes) {
			if (node.state() != NodeState.REMOVED && node.url().equals(url)) {
				throw new IllegalArgumentException(url + " is already node " + node.id() + " of the ring");
			}
		}
	}

	/** The node with this URL that is not removed. */
	public Optional<RingNode> nodeAt(URI url) {
		URI canonical = Node.canonical(url);
		return this.nodes.stream()
			.filter((node) -> node.state() != NodeState.REMOVED && node.url().equals(canonical))
			.findFirst();
	}

	/** A short description for logs. */
	public String describe() {
		return "ring " + this.clusterId + " epoch " + this.epoch
				+ ((this.generation.number() > 0) ? " of metadata generation " + this.generation.number() : "")
				+ " (RF " + this.replicationFactor + ", "
				+ this.nodes.stream().filter((n) -> n.state() != NodeState.REMOVED).count() + " nodes"
				+ ((this.change != null) ? ", " + this.change.kind().label() + " of " + this.change.nodeId() + " "
						+ this.change.phase().label() : "")
				+ ")";
	}

}
