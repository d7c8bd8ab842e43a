/**
 * The Java client of QuorumKV: {@link io.quorumkv.client.QuorumKvClient} (reactive,
 * {@code Mono}/{@code Flux}) with its blocking facade
 * {@link io.quorumkv.client.BlockingQuorumKvClient} and its {@code CompletableFuture}
 * facade {@link io.quorumkv.client.AsyncQuorumKvClient}, built by
 * {@link io.quorumkv.client.QuorumKvClientBuilder}.
 *
 * <p>
 * Everything else in this package is either a value the API takes or gives
 * ({@link io.quorumkv.client.Replicas}, {@link io.quorumkv.client.KeyValue},
 * {@link io.quorumkv.client.RetryPolicy}, {@link io.quorumkv.client.RoutingStats}), an
 * extension point ({@link io.quorumkv.client.Router},
 * {@link io.quorumkv.client.Credentials}, {@link io.quorumkv.client.TlsSettings}) or an
 * exception of the sealed {@link io.quorumkv.client.QuorumKvException} family; the
 * implementation is package-private.
 */
@NullMarked
package io.quorumkv.client;

import org.jspecify.annotations.NullMarked;
