@NullMarked
package io.quorumkv.storage.lsm.sstable;

import org.jspecify.annotations.NullMarked;
