@NullMarked
package io.quorumkv.storage.lsm.manifest;

import org.jspecify.annotations.NullMarked;
