@NullMarked
package io.quorumkv.storage.lsm;

import org.jspecify.annotations.NullMarked;
