package io.quorumkv.service.metadata;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.jspecify.annotations.Nullable;

/**
 * What a node knows of the metadata group, for {@code qkv status}: the group, its leader
 * (by node id, null while none is known), whether this node leads, the voters and
 * listeners, the last applied index, and on the leader how long ago each other member
 * last answered it.
 */
final class GroupView {

	private GroupView() {
	}

	static Map<String, @Nullable Object> of(@Nullable RaftServer raft, @Nullable RaftGroupId group, boolean leads) {
		Map<String, @Nullable Object> view = new LinkedHashMap<>();
		view.put("group", (group != null) ? group.getUuid().toString() : null);
		view.put("leads", leads);
		if (raft == null || group == null) {
			return view;
		}
		try {
			RaftServer.Division division = raft.getDivision(group);
			RaftPeerId leader = division.getInfo().getLeaderId();
			view.put("leader", (leader != null) ? leader.toString() : null);
			view.put("voters",
					GroupPeers.ids(division.getRaftConf().getCurrentPeers(RaftPeerRole.FOLLOWER))
						.stream()
						.sorted()
						.toList());
			view.put("listeners",
					GroupPeers.ids(division.getRaftConf().getCurrentPeers(RaftPeerRole.LISTENER))
						.stream()
						.sorted()
						.toList());
			view.put("applied", division.getInfo().getLastAppliedIndex());
			view.put("term", division.getInfo().getCurrentTerm());
			Map<String, Long> heard = heard(division);
			if (heard != null) {
				view.put("lastHeardMs", heard);
			}
		}
		catch (IOException ex) {
			view.put("leader", null);
		}
		return view;
	}

	/**
	 * The leader's view of who is up: how many milliseconds since each other member of
	 * the group last answered it (heartbeats go every few hundred ms); empty when this
	 * node does not lead.
	 */
	static Map<String, Long> heardByLeader(@Nullable RaftServer raft, @Nullable RaftGroupId group) {
		if (raft == null || group == null) {
			return Map.of();
		}
		try {
			RaftServer.Division division = raft.getDivision(group);
			if (!division.getInfo().isLeader()) {
				return Map.of();
			}
			Map<String, Long> heard = heard(division);
			return (heard != null) ? heard : Map.of();
		}
		catch (IOException ex) {
			return Map.of();
		}
	}

	private static @Nullable Map<String, Long> heard(RaftServer.Division division) {
		var role = division.getInfo().getRoleInfoProto();
		if (!role.hasLeaderInfo()) {
			return null;
		}
		Map<String, Long> heard = new TreeMap<>();
		role.getLeaderInfo()
			.getFollowerInfoList()
			.forEach((follower) -> heard.put(follower.getId().getId().toStringUtf8(),
					follower.getLastRpcElapsedTimeMs()));
		return heard;
	}

}
