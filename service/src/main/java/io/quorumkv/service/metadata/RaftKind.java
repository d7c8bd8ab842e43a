package io.quorumkv.service.metadata;

import java.util.Optional;

/**
 * The kinds of Raft call, each one route {@code POST /internal/v0/raft/<path>} whose
 * request and answer bodies are the serialized Ratis protocol buffers of that call.
 */
enum RaftKind {

	/** A candidate asks for a vote: {@code RequestVoteRequestProto}. */
	VOTE("vote"),
	/** The leader's entries or heartbeat: {@code AppendEntriesRequestProto}. */
	APPEND("append"),
	/** A chunk of the leader's snapshot: {@code InstallSnapshotRequestProto}. */
	INSTALL_SNAPSHOT("install-snapshot"),
	/** The leader hands leadership over: {@code StartLeaderElectionRequestProto}. */
	START_ELECTION("start-election"),
	/** A follower asks the leader's commit index: {@code ReadIndexRequestProto}. */
	READ_INDEX("read-index"),
	/** A client's write or read: {@code RaftClientRequestProto}. */
	CLIENT("client"),
	/** A client changes the voters: {@code SetConfigurationRequestProto}. */
	SET_CONFIGURATION("set-configuration"),
	/**
	 * A client adds or removes a group on a server: {@code GroupManagementRequestProto}.
	 */
	GROUP_MANAGEMENT("group-management"),
	/** A client asks a server about a group: {@code GroupInfoRequestProto}. */
	GROUP_INFO("group-info"),
	/** A client asks a server for its groups: {@code GroupListRequestProto}. */
	GROUP_LIST("group-list"),
	/** A client moves the leadership: {@code TransferLeadershipRequestProto}. */
	TRANSFER_LEADERSHIP("transfer-leadership"),
	/** A client asks for a snapshot: {@code SnapshotManagementRequestProto}. */
	SNAPSHOT_MANAGEMENT("snapshot-management"),
	/**
	 * A client pauses or resumes elections: {@code LeaderElectionManagementRequestProto}.
	 */
	ELECTION_MANAGEMENT("election-management");

	private final String path;

	RaftKind(String path) {
		this.path = path;
	}

	String path() {
		return this.path;
	}

	static Optional<RaftKind> of(String path) {
		for (RaftKind kind : values()) {
			if (kind.path.equals(path)) {
				return Optional.of(kind);
			}
		}
		return Optional.empty();
	}

}
