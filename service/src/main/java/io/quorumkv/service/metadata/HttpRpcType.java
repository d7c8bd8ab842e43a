package io.quorumkv.service.metadata;

import java.net.InetSocketAddress;
import java.util.Objects;

import org.apache.ratis.client.ClientFactory;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerRpc;
import org.apache.ratis.server.ServerFactory;

/**
 * Ratis' RPC over the node's one transport: a Ratis {@link RpcType} whose factory makes
 * the server and client sides ({@link HttpServerRpc}, {@link HttpClientRpc}) out of the
 * {@link RaftTransport} given in the server's {@link Parameters}. Ratis finds this type
 * by its class name in the server's properties, so it has a public no-argument
 * constructor.
 */
public final class HttpRpcType implements RpcType {

	/** The key of the {@link RaftTransport} in the server's {@link Parameters}. */
	static final String TRANSPORT = "quorumkv.raft.transport";

	/** The key of this node's socket address (what Ratis reports as its own). */
	static final String ADDRESS = "quorumkv.raft.address";

	static final HttpRpcType INSTANCE = new HttpRpcType();

	public HttpRpcType() {
	}

	@Override
	public String name() {
		return HttpRpcType.class.getName();
	}

	@Override
	public RpcFactory newFactory(Parameters parameters) {
		return new Factory(Objects.requireNonNull(parameters.get(TRANSPORT, RaftTransport.class), TRANSPORT),
				Objects.requireNonNull(parameters.get(ADDRESS, InetSocketAddress.class), ADDRESS));
	}

	static Parameters parameters(RaftTransport transport, InetSocketAddress address) {
		Parameters parameters = new Parameters();
		parameters.put(TRANSPORT, transport, RaftTransport.class);
		parameters.put(ADDRESS, address, InetSocketAddress.class);
		return parameters;
	}

	private record Factory(RaftTransport transport, InetSocketAddress address) implements ServerFactory, ClientFactory {

		@Override
		public RpcType getRpcType() {
			return INSTANCE;
		}

		@Override
		public RaftServerRpc newRaftServerRpc(RaftServer server) {
			return new HttpServerRpc(this.transport, this.address);
		}

		@Override
		public RaftClientRpc newRaftClientRpc(ClientId clientId, RaftProperties properties) {
			return new HttpClientRpc(this.transport);
		}

	}

}
