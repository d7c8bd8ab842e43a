@NullMarked
package io.quorumkv.service.ops;

import org.jspecify.annotations.NullMarked;
