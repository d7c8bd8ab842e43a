package io.quorumkv.service.metadata;

import java.util.concurrent.CompletableFuture;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.GroupInfoRequestProto;
import org.apache.ratis.proto.RaftProtos.GroupListRequestProto;
import org.apache.ratis.proto.RaftProtos.GroupManagementRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.LeaderElectionManagementRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.SetConfigurationRequestProto;
import org.apache.ratis.proto.RaftProtos.SnapshotManagementRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.proto.RaftProtos.TransferLeadershipRequestProto;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;
import org.apache.ratis.thirdparty.com.google.protobuf.MessageLite;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The receiving side of Ratis' RPC ({@code POST /internal/v0/raft/<kind>}): parses the
 * call's Ratis message, hands it to this node's Raft server and serializes its reply. The
 * server's calls may block (a vote writes its term to disk), so every one runs on the
 * metadata layer's bounded scheduler, never on the event loop that received it.
 */
public final class RaftEndpoint {

	private final Scheduler scheduler;

	private volatile @Nullable RaftServer server;

	/**
	 * Calls refused because they were for a group this node does not hold (metric
	 * {@code quorumkv.metadata.calls.other.group}): a voter fenced by a forced
	 * reconfiguration that came back keeps counting it up.
	 */
	private final Counter otherGroupCalls;

	RaftEndpoint(Scheduler scheduler, MeterRegistry meters) {
		this.scheduler = scheduler;
		this.otherGroupCalls = Counter.builder("quorumkv.metadata.calls.other.group")
			.description("Raft calls refused as calls for a metadata group this node does not hold")
			.register(meters);
	}

	void serve(@Nullable RaftServer server) {
		this.server = server;
	}

	/** A call that is not a Raft call of a known kind: a 400 or 404. */
	public static final class BadCall extends RuntimeException {

		private final boolean unknownKind;

		BadCall(String message, boolean unknownKind) {
			super(message, null, false, false);
			this.unknownKind = unknownKind;
		}

		public boolean unknownKind() {
			return this.unknownKind;
		}

	}

	/** The metadata layer has not started (or has stopped) on this node: a 503. */
	public static final class NotServing extends RuntimeException {

		NotServing(String message) {
			super(message, null, false, false);
		}

	}

	/**
	 * Answers one call: the serialized reply, or an error: {@link BadCall} for an unknown
	 * kind or a body that is not its message, {@link NotServing} before the server runs,
	 * and the server's own failure otherwise (its message is the reason a peer reads).
	 */
	public Mono<byte[]> handle(String path, byte[] body) {
		RaftKind kind = RaftKind.of(path).orElse(null);
		if (kind == null) {
			return Mono.error(new BadCall("no Raft call of kind '" + path + "'", true));
		}
		return Mono.defer(() -> {
			RaftServer raft = this.server;
			if (raft == null) {
				return Mono.error(new NotServing("the metadata layer is not running on this node yet"));
			}
			try {
				return Mono.fromFuture(dispatch(raft, kind, body)).map(MessageLite::toByteArray);
			}
			catch (Exception ex) {
				return Mono.error(ex);
			}
		}).subscribeOn(this.scheduler).doOnError(RaftEndpoint::forAnotherGroup, (error) -> {
			this.otherGroupCalls.increment();
		});
	}

	/**
	 * Whether a call failed because it was for a group this node does not hold: the
	 * caller is of another generation of the metadata group (a voter a forced
	 * reconfiguration fenced, or a node not yet moved to the new group).
	 */
	public static boolean forAnotherGroup(Throwable error) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (cause instanceof GroupMismatchException) {
				return true;
			}
		}
		return false;
	}

	private static CompletableFuture<? extends MessageLite> dispatch(RaftServer raft, RaftKind kind, byte[] body)
			throws Exception {
		try {
			return switch (kind) {
				case VOTE ->
					CompletableFuture.completedFuture(raft.requestVote(RequestVoteRequestProto.parseFrom(body)));
				case APPEND -> raft.appendEntriesAsync(AppendEntriesRequestProto.parseFrom(body));
				case INSTALL_SNAPSHOT -> CompletableFuture
					.completedFuture(raft.installSnapshot(InstallSnapshotRequestProto.parseFrom(body)));
				case START_ELECTION -> CompletableFuture
					.completedFuture(raft.startLeaderElection(StartLeaderElectionRequestProto.parseFrom(body)));
				case READ_INDEX -> raft.readIndexAsync(ReadIndexRequestProto.parseFrom(body));
				case CLIENT -> reply(raft.submitClientRequestAsync(
						ClientProtoUtils.toRaftClientRequest(RaftClientRequestProto.parseFrom(body))));
				case SET_CONFIGURATION -> reply(raft.setConfigurationAsync(
						ClientProtoUtils.toSetConfigurationRequest(SetConfigurationRequestProto.parseFrom(body))));
				case GROUP_MANAGEMENT -> reply(raft.groupManagementAsync(
						ClientProtoUtils.toGroupManagementRequest(GroupManagementRequestProto.parseFrom(body))));
				case GROUP_INFO ->
					raft.getGroupInfoAsync(ClientProtoUtils.toGroupInfoRequest(GroupInfoRequestProto.parseFrom(body)))
						.thenApply(ClientProtoUtils::toGroupInfoReplyProto);
				case GROUP_LIST ->
					raft.getGroupListAsync(ClientProtoUtils.toGroupListRequest(GroupListRequestProto.parseFrom(body)))
						.thenApply(ClientProtoUtils::toGroupListReplyProto);
				case TRANSFER_LEADERSHIP -> reply(raft.transferLeadershipAsync(
						ClientProtoUtils.toTransferLeadershipRequest(TransferLeadershipRequestProto.parseFrom(body))));
				case SNAPSHOT_MANAGEMENT -> reply(raft.snapshotManagementAsync(
						ClientProtoUtils.toSnapshotManagementRequest(SnapshotManagementRequestProto.parseFrom(body))));
				case ELECTION_MANAGEMENT -> reply(raft.leaderElectionManagementAsync(ClientProtoUtils
					.toLeaderElectionManagementRequest(LeaderElectionManagementRequestProto.parseFrom(body))));
			};
		}
		catch (InvalidProtocolBufferException | IllegalArgumentException ex) {
			throw new BadCall("not a Raft " + kind.path() + " message: " + ex.getMessage(), false);
		}
	}

	private static CompletableFuture<? extends MessageLite> reply(CompletableFuture<RaftClientReply> reply) {
		return reply.thenApply(ClientProtoUtils::toRaftClientReplyProto);
	}

}
