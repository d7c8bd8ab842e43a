@NullMarked
package io.quorumkv.service.cluster;

import org.jspecify.annotations.NullMarked;
