/**
 * LSM engine internals: memtable. Not API.
 */
@NullMarked
package io.quorumkv.storage.lsm.memtable;

import org.jspecify.annotations.NullMarked;
