/**
 * Conditional writes and serial reads by single-decree Paxos per key among the key's
 * replicas, after Cassandra's lightweight transactions:
 * {@link io.quorumkv.service.paxos.Paxos} is the coordinator's entry; the acceptor's side
 * answers on the replica streams. See docs/design.md, "Conditional writes".
 */
@NullMarked
package io.quorumkv.service.paxos;

import org.jspecify.annotations.NullMarked;
