@NullMarked
package io.quorumkv.service.http;

import org.jspecify.annotations.NullMarked;
