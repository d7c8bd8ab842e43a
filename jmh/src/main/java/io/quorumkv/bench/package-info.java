/**
 * JMH micro-benchmarks of the storage backends behind the SPI, with RocksDB
 * ({@link io.quorumkv.bench.RocksDbStorage}) as an outside anchor. See
 * {@code docs/benchmarks.md} for how to run them and what they measure.
 */
@NullMarked
package io.quorumkv.bench;

import org.jspecify.annotations.NullMarked;
