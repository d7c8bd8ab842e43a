/**
 * The cluster's metadata on Raft (docs/membership.md, "The metadata log"): an Apache
 * Ratis group whose state machine is the ring, with Ratis' RPC carried by the node's one
 * {@code WebClient} and the internal API's routes.
 */
@NullMarked
package io.quorumkv.service.metadata;

import org.jspecify.annotations.NullMarked;
