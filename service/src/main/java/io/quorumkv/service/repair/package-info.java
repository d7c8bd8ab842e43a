/**
 * Anti-entropy repair: replicas of each token range compare Merkle trees, descend only
 * into differing sub-ranges and stream the differing entries both ways; and what repair
 * makes safe: tombstone purge once a range was repaired after the tombstone was written.
 */
@NullMarked
package io.quorumkv.service.repair;

import org.jspecify.annotations.NullMarked;
