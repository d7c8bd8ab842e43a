@NullMarked
package io.quorumkv.service.replication;

import org.jspecify.annotations.NullMarked;
