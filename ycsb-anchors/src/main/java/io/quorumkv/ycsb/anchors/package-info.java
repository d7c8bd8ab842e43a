/**
 * YCSB bindings for the stores QuorumKV is measured beside, written the way
 * {@link io.quorumkv.ycsb.QuorumKvDb} is: one shared client per run, a record as one
 * value encoded by {@link io.quorumkv.ycsb.FieldCodec}, updates merged by
 * read-modify-write, keys {@code table/key}. {@link io.quorumkv.ycsb.anchors.CassandraDb}
 * reads and writes at {@code QUORUM} through prepared statements;
 * {@link io.quorumkv.ycsb.anchors.EtcdDb} uses etcd's linearizable reads.
 */
@NullMarked
package io.quorumkv.ycsb.anchors;

import org.jspecify.annotations.NullMarked;
