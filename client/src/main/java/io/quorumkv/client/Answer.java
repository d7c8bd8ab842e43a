package io.quorumkv.client;

import org.jspecify.annotations.Nullable;

/**
 * A node's answer to a single-entity request.
 *
 * @param status the HTTP status
 * @param body the body's bytes (the value of a 200, the reason of an error)
 * @param retryAfter the {@code Retry-After} header, when present
 * @param etag the {@code ETag} header (the version of a read), when present
 */
record Answer(int status, byte[] body, @Nullable String retryAfter, @Nullable String etag) {

}
