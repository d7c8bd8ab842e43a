/**
 * LSM engine internals: manifest. Not API.
 */
@NullMarked
package io.quorumkv.storage.lsm.manifest;

import org.jspecify.annotations.NullMarked;
