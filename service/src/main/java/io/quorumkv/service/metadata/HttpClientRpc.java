package io.quorumkv.service.metadata;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.proto.RaftProtos.GroupInfoReplyProto;
import org.apache.ratis.proto.RaftProtos.GroupListReplyProto;
import org.apache.ratis.proto.RaftProtos.RaftClientReplyProto;
import org.apache.ratis.protocol.GroupInfoRequest;
import org.apache.ratis.protocol.GroupListRequest;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.LeaderElectionManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;

/**
 * The client side of Ratis' RPC: a Raft client's requests (writes, reads, configuration
 * and group changes) as {@link RaftTransport} calls to the server they name. A reply that
 * says the server does not lead fails the call with that exception, from which the Raft
 * client learns the leader and retries there.
 */
final class HttpClientRpc implements RaftClientRpc {

	private final RaftTransport transport;

	private final Map<RaftPeerId, String> addresses = new ConcurrentHashMap<>();

	HttpClientRpc(RaftTransport transport) {
		this.transport = transport;
	}

	@Override
	public void addRaftPeers(Collection<RaftPeer> peers) {
		for (RaftPeer peer : peers) {
			this.addresses.put(peer.getId(), peer.getAddress());
		}
	}

	@Override
	public CompletableFuture<RaftClientReply> sendRequestAsync(RaftClientRequest request) {
		String address = this.addresses.get(request.getServerId());
		if (address == null) {
			return CompletableFuture
				.failedFuture(new IOException("no address known for Raft peer " + request.getServerId()));
		}
		RaftKind kind = kind(request);
		CompletableFuture<RaftClientReply> answer = new CompletableFuture<>();
		this.transport.async(address, kind, encode(request)).whenComplete((bytes, error) -> {
			if (error != null) {
				answer.completeExceptionally(unwrap(error));
				return;
			}
			try {
				RaftClientReply reply = decode(request, bytes);
				if (reply.getNotLeaderException() != null) {
					answer.completeExceptionally(reply.getNotLeaderException());
				}
				else if (reply.getLeaderNotReadyException() != null) {
					answer.completeExceptionally(reply.getLeaderNotReadyException());
				}
				else {
					answer.complete(reply);
				}
			}
			catch (RuntimeException ex) {
				answer.completeExceptionally(new IOException(ex.getMessage(), ex));
			}
		});
		return answer;
	}

	private static Throwable unwrap(Throwable error) {
		return (error instanceof java.util.concurrent.CompletionException && error.getCause() != null)
				? error.getCause() : error;
	}

	/**
	 * Waited for: only on threads that may block (Ratis' own), never on an event loop.
	 */
	@Override
	public RaftClientReply sendRequest(RaftClientRequest request) throws IOException {
		try {
			return sendRequestAsync(request).get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new InterruptedIOException("interrupted: " + request);
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			throw (cause instanceof IOException io) ? io : new IOException(cause);
		}
	}

	@Override
	public void close() {
	}

	static RaftKind kind(RaftClientRequest request) {
		return switch (request) {
			case GroupManagementRequest group -> RaftKind.GROUP_MANAGEMENT;
			case SetConfigurationRequest configuration -> RaftKind.SET_CONFIGURATION;
			case GroupListRequest list -> RaftKind.GROUP_LIST;
			case GroupInfoRequest info -> RaftKind.GROUP_INFO;
			case TransferLeadershipRequest transfer -> RaftKind.TRANSFER_LEADERSHIP;
			case SnapshotManagementRequest snapshot -> RaftKind.SNAPSHOT_MANAGEMENT;
			case LeaderElectionManagementRequest election -> RaftKind.ELECTION_MANAGEMENT;
			default -> RaftKind.CLIENT;
		};
	}

	static byte[] encode(RaftClientRequest request) {
		return switch (request) {
			case GroupManagementRequest group -> ClientProtoUtils.toGroupManagementRequestProto(group).toByteArray();
			case SetConfigurationRequest configuration ->
				ClientProtoUtils.toSetConfigurationRequestProto(configuration).toByteArray();
			case GroupListRequest list -> ClientProtoUtils.toGroupListRequestProto(list).toByteArray();
			case GroupInfoRequest info -> ClientProtoUtils.toGroupInfoRequestProto(info).toByteArray();
			case TransferLeadershipRequest transfer ->
				ClientProtoUtils.toTransferLeadershipRequestProto(transfer).toByteArray();
			case SnapshotManagementRequest snapshot ->
				ClientProtoUtils.toSnapshotManagementRequestProto(snapshot).toByteArray();
			case LeaderElectionManagementRequest election ->
				ClientProtoUtils.toLeaderElectionManagementRequestProto(election).toByteArray();
			default -> ClientProtoUtils.toRaftClientRequestProto(request).toByteArray();
		};
	}

	private static RaftClientReply decode(RaftClientRequest request, byte[] bytes) {
		return HttpServerRpc.parse(() -> switch (request) {
			case GroupListRequest list -> ClientProtoUtils.toGroupListReply(GroupListReplyProto.parseFrom(bytes));
			case GroupInfoRequest info -> ClientProtoUtils.toGroupInfoReply(GroupInfoReplyProto.parseFrom(bytes));
			default -> ClientProtoUtils.toRaftClientReply(RaftClientReplyProto.parseFrom(bytes));
		});
	}

}
