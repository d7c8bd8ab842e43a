package io.quorumkv.service.metadata;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexReplyProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionReplyProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServerRpc;
import org.apache.ratis.server.protocol.RaftServerAsynchronousProtocol;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;

/**
 * The server side of Ratis' RPC: the calls this node's Raft server makes to its peers
 * (votes, entries, snapshots), each a {@link RaftTransport} call to the peer's address.
 * Ratis makes the blocking ones on threads of its own. Nothing listens here: the calls of
 * the peers arrive through the internal API's routes ({@link RaftEndpoint}).
 */
final class HttpServerRpc implements RaftServerRpc, RaftServerAsynchronousProtocol {

	private final RaftTransport transport;

	private final InetSocketAddress address;

	private final Map<RaftPeerId, String> addresses = new ConcurrentHashMap<>();

	HttpServerRpc(RaftTransport transport, InetSocketAddress address) {
		this.transport = transport;
		this.address = address;
	}

	@Override
	public RpcType getRpcType() {
		return HttpRpcType.INSTANCE;
	}

	@Override
	public void start() {
	}

	@Override
	public void close() {
	}

	@Override
	public InetSocketAddress getInetSocketAddress() {
		return this.address;
	}

	@Override
	public void addRaftPeers(Collection<RaftPeer> peers) {
		for (RaftPeer peer : peers) {
			this.addresses.put(peer.getId(), peer.getAddress());
		}
	}

	@Override
	public void handleException(RaftPeerId serverId, Exception e, boolean reconnect) {
		// Nothing to reset: every call takes a pooled connection of the one client.
	}

	private String address(RaftRpcRequestProto request) throws IOException {
		RaftPeerId target = RaftPeerId.valueOf(request.getReplyId());
		String address = this.addresses.get(target);
		if (address == null) {
			throw new IOException("no address known for Raft peer " + target);
		}
		return address;
	}

	@Override
	public RequestVoteReplyProto requestVote(RequestVoteRequestProto request) throws IOException {
		return RequestVoteReplyProto.parseFrom(
				this.transport.blocking(address(request.getServerRequest()), RaftKind.VOTE, request.toByteArray()));
	}

	@Override
	public AppendEntriesReplyProto appendEntries(AppendEntriesRequestProto request) throws IOException {
		return AppendEntriesReplyProto.parseFrom(
				this.transport.blocking(address(request.getServerRequest()), RaftKind.APPEND, request.toByteArray()));
	}

	@Override
	public InstallSnapshotReplyProto installSnapshot(InstallSnapshotRequestProto request) throws IOException {
		return InstallSnapshotReplyProto.parseFrom(this.transport.blocking(address(request.getServerRequest()),
				RaftKind.INSTALL_SNAPSHOT, request.toByteArray()));
	}

	@Override
	public StartLeaderElectionReplyProto startLeaderElection(StartLeaderElectionRequestProto request)
			throws IOException {
		return StartLeaderElectionReplyProto.parseFrom(this.transport.blocking(address(request.getServerRequest()),
				RaftKind.START_ELECTION, request.toByteArray()));
	}

	@Override
	public RaftServerAsynchronousProtocol async() {
		return this;
	}

	@Override
	public CompletableFuture<AppendEntriesReplyProto> appendEntriesAsync(AppendEntriesRequestProto request)
			throws IOException {
		return this.transport.async(address(request.getServerRequest()), RaftKind.APPEND, request.toByteArray())
			.thenApply((bytes) -> parse(() -> AppendEntriesReplyProto.parseFrom(bytes)));
	}

	@Override
	public CompletableFuture<ReadIndexReplyProto> readIndexAsync(ReadIndexRequestProto request) throws IOException {
		return this.transport.async(address(request.getServerRequest()), RaftKind.READ_INDEX, request.toByteArray())
			.thenApply((bytes) -> parse(() -> ReadIndexReplyProto.parseFrom(bytes)));
	}

	static <T> T parse(Parser<T> parser) {
		try {
			return parser.parse();
		}
		catch (InvalidProtocolBufferException ex) {
			throw new IllegalStateException("malformed Raft reply: " + ex.getMessage(), ex);
		}
	}

	@FunctionalInterface
	interface Parser<T> {

		T parse() throws InvalidProtocolBufferException;

	}

}
