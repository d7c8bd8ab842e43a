/**
 * The storage SPI of QuorumKV: what every backend (LSM, H2, Derby) implements and what
 * the service and the replication layer use.
 *
 * <p>
 * The single ordering rule of the whole system lives here, in
 * {@link io.quorumkv.storage.EntryOrder}: the greater timestamp wins; on equal timestamps
 * a tombstone beats a value; between two values with equal timestamps the greater one in
 * unsigned byte order wins. Replicas that apply this rule converge whatever order the
 * writes arrive in.
 */
@NullMarked
package io.quorumkv.storage;

import org.jspecify.annotations.NullMarked;
