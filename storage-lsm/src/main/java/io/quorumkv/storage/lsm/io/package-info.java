/**
 * LSM engine internals: the file operations the engine is made of, behind one seam (real
 * NIO in production, a fault-injecting file layer in tests). Not API.
 */
@NullMarked
package io.quorumkv.storage.lsm.io;

import org.jspecify.annotations.NullMarked;
