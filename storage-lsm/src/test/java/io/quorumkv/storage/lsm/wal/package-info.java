@NullMarked
package io.quorumkv.storage.lsm.wal;

import org.jspecify.annotations.NullMarked;
