/**
 * The Apache Derby backend of QuorumKV: an embedded Derby database under the node's data
 * folder, reached through JDBC and a bounded HikariCP pool. Every JDBC call runs on the
 * backend's own bounded executor ({@link io.quorumkv.storage.derby.JdbcExecutor}), never
 * on the caller's thread.
 *
 * <p>
 * The public surface is {@link io.quorumkv.storage.derby.DerbyStorage} and
 * {@link io.quorumkv.storage.derby.DerbyStorageOptions}; the rest is package-private.
 */
@NullMarked
package io.quorumkv.storage.derby;

import org.jspecify.annotations.NullMarked;
