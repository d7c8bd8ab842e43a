/**
 * The one transport between nodes: {@link io.quorumkv.service.peer.PeerClient} (one
 * {@code WebClient} over one shared connection pool), its streams of replica operations
 * with their frames, deadlines and event-loop affinity, the node-to-node protocol
 * ({@link io.quorumkv.service.peer.InternalApi}) and the peer exceptions. It knows
 * nothing of placement or repair trees, and of rings only the stamp every call carries:
 * the features that use it own their calls (scans, repair, the ring protocol, Raft), and
 * a feature's messages on the replica streams are opaque payloads to its
 * {@link io.quorumkv.service.peer.StreamService} (Paxos).
 */
@NullMarked
package io.quorumkv.service.peer;

import org.jspecify.annotations.NullMarked;
