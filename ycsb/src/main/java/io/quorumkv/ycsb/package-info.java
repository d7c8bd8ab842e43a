/**
 * QuorumKV's YCSB binding: {@link io.quorumkv.ycsb.QuorumKvDb}, a {@code site.ycsb.DB}
 * over the QuorumKV client, and {@link io.quorumkv.ycsb.FieldCodec}, the mapping of a
 * YCSB record's fields to one value that every binding of ours (QuorumKV, Cassandra,
 * etcd) shares, so that the stores compared store the same bytes.
 */
@NullMarked
package io.quorumkv.ycsb;

import org.jspecify.annotations.NullMarked;
