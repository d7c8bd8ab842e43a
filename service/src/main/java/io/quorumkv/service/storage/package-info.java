@NullMarked
package io.quorumkv.service.storage;

import org.jspecify.annotations.NullMarked;
