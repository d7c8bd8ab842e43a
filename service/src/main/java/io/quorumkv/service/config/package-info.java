@NullMarked
package io.quorumkv.service.config;

import org.jspecify.annotations.NullMarked;
