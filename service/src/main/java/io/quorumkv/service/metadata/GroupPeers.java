package io.quorumkv.service.metadata;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftConfiguration;

/**
 * Who belongs to the metadata group for a ring, and the leader's changes of the group's
 * configuration toward it: the voters (the first normal nodes by id, up to
 * {@value #MAX_VOTERS}) and every other node not removed as a listener. A node declared
 * dead by the change under way, or fenced by a forced reconfiguration
 * ({@link io.quorumkv.service.cluster.GroupGeneration}), is neither.
 */
final class GroupPeers {

	/** Voters of a ring of five normal nodes or more. */
	static final int MAX_VOTERS = 5;

	/** How long a leader that stops voting waits for its successor to take over. */
	private static final long LEADERSHIP_TRANSFER_MS = 5_000;

	private static final Log logger = LogFactory.getLog(MetadataGroup.class);

	private GroupPeers() {
	}

	/**
	 * The voters of a ring: its first normal nodes by id, five of five or more, three of
	 * three or four, all of fewer.
	 */
	static List<RingNode> voters(Ring ring) {
		List<RingNode> normal = ring.nodes()
			.stream()
			.filter((node) -> node.state() == NodeState.NORMAL)
			.filter((node) -> ring.change() == null || !ring.change().declaresDead(node.id()))
			.filter((node) -> !ring.generation().fences(node))
			.sorted(Comparator.comparing(RingNode::id))
			.toList();
		int count = (normal.size() >= MAX_VOTERS) ? MAX_VOTERS : (normal.size() >= 3) ? 3 : normal.size();
		return normal.subList(0, count);
	}

	/** The voters and, as listeners, every other node of the ring not removed. */
	static List<RaftPeer> peers(Ring ring) {
		List<RingNode> voters = voters(ring);
		List<RaftPeer> peers = new ArrayList<>();
		for (RingNode voter : voters) {
			peers.add(peer(voter, RaftPeerRole.FOLLOWER));
		}
		for (RingNode node : ring.nodes()) {
			boolean dead = (ring.change() != null && ring.change().declaresDead(node.id()))
					|| ring.generation().fences(node);
			if (node.state() != NodeState.REMOVED && !dead && !voters.contains(node)) {
				peers.add(peer(node, RaftPeerRole.LISTENER));
			}
		}
		return peers;
	}

	private static RaftPeer peer(RingNode node, RaftPeerRole role) {
		return RaftPeer.newBuilder().setId(node.id()).setAddress(node.node().base()).setStartupRole(role).build();
	}

	static Set<String> ids(Collection<RaftPeer> peers) {
		return peers.stream().map((peer) -> peer.getId().toString()).collect(Collectors.toSet());
	}

	/**
	 * On the leader ({@code self}): makes the configuration {@code conf} the one
	 * {@code ring} calls for, one step at a time; nothing while a change of it is under
	 * way. Whether {@code conf} already was the one the ring calls for.
	 */
	static boolean reconcile(RaftConfiguration conf, RaftGroupId group, Ring ring, String self,
			Supplier<RaftClient> clients) throws IOException {
		if (!conf.getPreviousPeers().isEmpty()) {
			return false;
		}
		List<RaftPeer> wanted = peers(ring);
		Set<String> voters = ids(conf.getCurrentPeers(RaftPeerRole.FOLLOWER));
		Set<String> listeners = ids(conf.getCurrentPeers(RaftPeerRole.LISTENER));
		List<RaftPeer> wantedVoters = wanted.stream()
			.filter((peer) -> peer.getStartupRole() == RaftPeerRole.FOLLOWER)
			.toList();
		List<RaftPeer> wantedListeners = wanted.stream()
			.filter((peer) -> peer.getStartupRole() == RaftPeerRole.LISTENER)
			.toList();
		if (voters.equals(ids(wantedVoters)) && listeners.equals(ids(wantedListeners))) {
			return true;
		}
		RaftClient raftClient = clients.get();
		if (!ids(wantedVoters).contains(self)) {
			// A leader the new configuration no longer counts as a voter (it is leaving)
			// hands its leadership to a voter that stays first: a leader that demoted
			// itself to a listener stays leader of a configuration it does not vote in,
			// and no further change of the configuration gets through (Ratis 3.2.1). The
			// next leader changes the configuration.
			RaftPeer next = wantedVoters.stream()
				.filter((peer) -> voters.contains(peer.getId().toString()))
				.findFirst()
				.orElse(null);
			if (next != null) {
				logger.info("Metadata group: leadership handed from " + self + " to " + next.getId()
						+ " before this node stops voting");
				RaftClientReply moved = raftClient.admin().transferLeadership(next.getId(), LEADERSHIP_TRANSFER_MS);
				if (!moved.isSuccess()) {
					logger.warn("Metadata group leadership not handed over yet: " + moved.getException());
				}
				return false;
			}
		}
		for (RaftPeer peer : wanted) {
			String id = peer.getId().toString();
			if (!voters.contains(id) && !listeners.contains(id)) {
				try {
					raftClient.getGroupManagementApi(peer.getId()).add(RaftGroup.valueOf(group, wanted));
					logger.info("Metadata group given to " + id);
				}
				catch (IOException ex) {
					// Already a member there (it restarted), or down: the configuration
					// change below waits for it to catch up, or fails and is tried again.
					logger.debug("Giving the metadata group to " + id + ": " + ex.getMessage());
				}
			}
		}
		logger.info("Metadata group: voters " + voters + " -> " + ids(wantedVoters) + ", listeners " + listeners
				+ " -> " + ids(wantedListeners));
		RaftClientReply reply = raftClient.admin().setConfiguration(wantedVoters, wantedListeners);
		if (!reply.isSuccess()) {
			logger.warn("Metadata group configuration not changed: " + reply.getException());
		}
		return false;
	}

}
