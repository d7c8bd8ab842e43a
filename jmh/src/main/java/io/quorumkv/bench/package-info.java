/**
 * JMH micro-benchmarks of QuorumKV's storage backends and placement (to come). The
 * load-test report builder lives in {@link io.quorumkv.bench.report}.
 */
@NullMarked
package io.quorumkv.bench;

import org.jspecify.annotations.NullMarked;
