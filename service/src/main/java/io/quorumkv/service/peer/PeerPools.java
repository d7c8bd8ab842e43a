package io.quorumkv.service.peer;

import java.time.Duration;
import java.util.List;

import io.quorumkv.service.cluster.ClusterProperties;
import io.quorumkv.service.cluster.Node;
import reactor.netty.resources.ConnectionProvider;

/**
 * The connection pools of the peer transport: one pool per peer (Reactor Netty keeps a
 * pool per remote address), each bounded in connections and in callers waiting for one,
 * with metrics.
 */
final class PeerPools {

	private static final Duration MAX_IDLE = Duration.ofSeconds(30);

	private static final Duration EVICTION = Duration.ofSeconds(15);

	private PeerPools() {
	}

	/**
	 * The pools. The known peers are named with {@code forRemoteHost}; a host given that
	 * way takes none of the builder's defaults, so each setting is repeated for it.
	 */
	static ConnectionProvider of(ClusterProperties cluster, List<Node> peers) {
		ConnectionProvider.Builder builder = ConnectionProvider.builder("quorumkv-peers")
			.maxConnections(cluster.maxConnectionsPerPeer())
			.pendingAcquireMaxCount(cluster.maxPendingPerPeer())
			.pendingAcquireTimeout(cluster.replicaTimeout())
			.maxIdleTime(MAX_IDLE)
			.evictInBackground(EVICTION)
			.metrics(true);
		for (Node peer : peers) {
			builder.forRemoteHost(peer.address(),
					(spec) -> spec.maxConnections(cluster.maxConnectionsPerPeer())
						.pendingAcquireMaxCount(cluster.maxPendingPerPeer())
						.pendingAcquireTimeout(cluster.replicaTimeout())
						.maxIdleTime(MAX_IDLE)
						.evictInBackground(EVICTION)
						.metrics(true));
		}
		return builder.build();
	}

}
