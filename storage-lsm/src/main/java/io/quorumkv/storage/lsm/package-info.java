/**
 * The LSM storage engine of QuorumKV: {@link io.quorumkv.storage.lsm.LsmStorage} opened
 * with {@link io.quorumkv.storage.lsm.LsmOptions}. Everything else in this package and
 * its subpackages is implementation; subpackage types are public only so that the engine
 * can use them across packages, and are not API.
 */
@NullMarked
package io.quorumkv.storage.lsm;

import org.jspecify.annotations.NullMarked;
