/**
 * LSM engine internals: iterator. Not API.
 */
@NullMarked
package io.quorumkv.storage.lsm.iterator;

import org.jspecify.annotations.NullMarked;
