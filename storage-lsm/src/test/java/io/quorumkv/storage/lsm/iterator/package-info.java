@NullMarked
package io.quorumkv.storage.lsm.iterator;

import org.jspecify.annotations.NullMarked;
