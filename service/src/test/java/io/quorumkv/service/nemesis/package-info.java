/**
 * The nemesis suite (issue 28): real node processes attacked with kills, pauses,
 * partitions, clock skew, full disks and restores from old copies while concurrent
 * clients write, delete and read; every invocation and completion is recorded in a
 * {@link io.quorumkv.service.nemesis.History}, and the
 * {@link io.quorumkv.service.nemesis.Checker} finds lost acknowledged writes, resurrected
 * deletes, stale quorum reads and values never written.
 */
@NullMarked
package io.quorumkv.service.nemesis;

import org.jspecify.annotations.NullMarked;
