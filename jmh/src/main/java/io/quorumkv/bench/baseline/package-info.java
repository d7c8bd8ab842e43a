/**
 * The performance baseline: the HTTP stack QuorumKV is built on, without QuorumKV.
 */
@NullMarked
package io.quorumkv.bench.baseline;

import org.jspecify.annotations.NullMarked;
