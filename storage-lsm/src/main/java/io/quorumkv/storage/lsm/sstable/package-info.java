/**
 * LSM engine internals: sstable. Not API.
 */
@NullMarked
package io.quorumkv.storage.lsm.sstable;

import org.jspecify.annotations.NullMarked;
