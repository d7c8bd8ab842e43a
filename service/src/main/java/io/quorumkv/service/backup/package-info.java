/**
 * Backups: online snapshots of a node's storage with a manifest of checksums
 * ({@link io.quorumkv.service.backup.NodeSnapshots}), their verification
 * ({@link io.quorumkv.service.backup.SnapshotVerifier}), and the restore of a snapshot
 * set into a running cluster through its write path
 * ({@link io.quorumkv.service.backup.Restore}) (docs/backup.md).
 */
@NullMarked
package io.quorumkv.service.backup;

import org.jspecify.annotations.NullMarked;
