/**
 * The transport between nodes: the one {@code WebClient}'s streams of replica operations,
 * their frames, deadlines and event-loop affinity, and the peer exceptions. It knows
 * nothing of rings, placement or repair trees: the features that use it own their
 * protocols.
 */
@NullMarked
package io.quorumkv.service.peer;

import org.jspecify.annotations.NullMarked;
