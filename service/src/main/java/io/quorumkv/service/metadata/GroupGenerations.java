package io.quorumkv.service.metadata;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.storage.ChecksummedFile;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.ratis.protocol.RaftGroupId;
import org.jspecify.annotations.Nullable;

/**
 * The metadata group of each generation, and the checks and files of a forced
 * reconfiguration (docs/membership.md, "Losing a majority of the voters").
 *
 * <p>
 * A generation's group has an id of its own (a name-based UUID of the cluster id and the
 * generation; the first generation keeps the id of a cluster from before generations), so
 * a voter of an earlier generation reaches no group of the new one: every Raft call it
 * makes is refused by Ratis as a call for a group the node does not hold. The folders of
 * earlier groups move to {@code <data folder>/raft-retired} before the Raft server starts
 * (Ratis would otherwise load every group it finds), where they stay for an operator to
 * look at.
 */
final class GroupGenerations {

	private static final Log logger = LogFactory.getLog(GroupGenerations.class);

	/** Beside {@code raft/}: the folders of the groups of earlier generations. */
	static final String RETIRED = "raft-retired";

	private GroupGenerations() {
	}

	/** The id of the metadata group a ring belongs to. */
	static RaftGroupId groupId(Ring ring) {
		long generation = ring.generation().number();
		String name = "quorumkv-metadata:" + ring.clusterId() + ((generation > 0) ? ":" + generation : "");
		return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)));
	}

	/** Whether the ring keeps this node out of its metadata group (fenced). */
	static boolean fenced(Ring ring, String self) {
		return ring.node(self).map((node) -> ring.generation().fences(node)).orElse(false);
	}

	/**
	 * Why a forced reconfiguration from this node ({@code self}, whose ring is
	 * {@code ring}) declaring {@code lost} gone for good must be refused; null when it
	 * may go on. It may only when this node is a voter, the lost nodes are voters, and
	 * the voters left are no majority (else the group elects a leader and {@code remove}
	 * is the way).
	 */
	static @Nullable String refusal(Ring ring, String self, List<String> lost) {
		List<String> voters = GroupPeers.voters(ring).stream().map(RingNode::id).toList();
		if (!voters.contains(self)) {
			return "this node is no voter of the metadata group (voters " + voters
					+ "): force the reconfiguration on a surviving voter";
		}
		if (lost.isEmpty()) {
			return "name the voters lost for good";
		}
		if (lost.contains(self)) {
			return "this node is among the voters named lost";
		}
		for (String id : lost) {
			if (!voters.contains(id)) {
				return "node " + id + " is no voter of the metadata group (voters " + voters + ")";
			}
		}
		int left = voters.size() - lost.size();
		if (left > voters.size() / 2) {
			return left + " of " + voters.size() + " voters are left, a majority: the group elects a leader, "
					+ "take the lost nodes out with remove or replace";
		}
		return null;
	}

	/**
	 * Moves every group folder of {@code raft} but {@code keep}'s to {@link #RETIRED},
	 * durably (the parent folders are synced); the folders moved.
	 */
	static List<String> retireOthers(Path raft, RaftGroupId keep) throws IOException {
		if (!Files.isDirectory(raft)) {
			return List.of();
		}
		String kept = keep.getUuid().toString();
		List<Path> others;
		try (Stream<Path> children = Files.list(raft)) {
			others = children.filter(Files::isDirectory)
				.filter((child) -> !child.getFileName().toString().equals(kept))
				.filter((child) -> isUuid(child.getFileName().toString()))
				.toList();
		}
		if (others.isEmpty()) {
			return List.of();
		}
		Path retired = raft.resolveSibling(RETIRED);
		Files.createDirectories(retired);
		for (Path group : others) {
			Path target = retired.resolve(group.getFileName() + "-" + System.currentTimeMillis());
			Files.move(group, target, StandardCopyOption.ATOMIC_MOVE);
			logger.warn("Metadata group folder " + group + " moved to " + target
					+ ": that group is of an earlier generation (a forced reconfiguration formed group " + kept + ")");
		}
		ChecksummedFile.syncFolder(retired);
		ChecksummedFile.syncFolder(raft);
		return others.stream().map((group) -> group.getFileName().toString()).toList();
	}

	private static boolean isUuid(String name) {
		try {
			UUID.fromString(name);
			return true;
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
	}

}
