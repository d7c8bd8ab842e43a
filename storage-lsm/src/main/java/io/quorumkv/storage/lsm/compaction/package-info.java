/**
 * LSM engine internals: compaction. Not API.
 */
@NullMarked
package io.quorumkv.storage.lsm.compaction;

import org.jspecify.annotations.NullMarked;
