package io.quorumkv.client;

/**
 * How the client's requests were routed since it was built
 * ({@link QuorumKvClient#routingStats()}): each attempt of a request with a key (every
 * request but a scan's pages) counts once, a retry again.
 *
 * <pre>{@code
 * RoutingStats stats = client.routingStats();
 * long all = stats.toReplica() + stats.toOtherNode() + stats.withoutRing();
 * double atReplica = (all > 0) ? (double) stats.toReplica() / all : 0;
 * }</pre>
 *
 * @param toReplica attempts sent to a replica of their key under the ring the client
 * held: the node coordinates with one network hop less
 * @param toOtherNode attempts sent to a node that is not a replica of their key although
 * the client knew the ring (every replica was marked down, or retries went past them)
 * @param withoutRing attempts sent without a ring: before the client read it, with
 * {@link QuorumKvClientBuilder.Routing#ANY_NODE}, or with a custom {@link Router}
 * @param ringEpoch the epoch of the ring the client routes by, 0 when it has none
 */
public record RoutingStats(long toReplica, long toOtherNode, long withoutRing, long ringEpoch) {

}
