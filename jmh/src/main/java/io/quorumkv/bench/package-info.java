/**
 * JMH micro-benchmarks of the storage backends behind the SPI, with RocksDB
 * ({@link io.quorumkv.bench.RocksDbStorage}) as an outside anchor, and of placement. See
 * {@code docs/benchmarks.md} for how to run them. The load-test report builder lives in
 * {@link io.quorumkv.bench.report}, the baseline server in
 * {@link io.quorumkv.bench.baseline}.
 */
@NullMarked
package io.quorumkv.bench;

import org.jspecify.annotations.NullMarked;
