/**
 * LSM engine internals: wal. Not API.
 */
@NullMarked
package io.quorumkv.storage.lsm.wal;

import org.jspecify.annotations.NullMarked;
