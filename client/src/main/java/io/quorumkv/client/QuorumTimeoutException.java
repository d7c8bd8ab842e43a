package io.quorumkv.client;

import java.net.URI;

import org.jspecify.annotations.Nullable;

/**
 * Fewer than {@code ack} replicas confirmed within the node's replica timeout (HTTP 504).
 * A write may have reached some replicas (and hinted handoff may complete it later); a
 * read found no quorum. Reads are retried by the client; writes only when the caller
 * opted in ({@link RetryPolicy#retryWrites()}).
 */
public final class QuorumTimeoutException extends QuorumKvException {

	QuorumTimeoutException(String message, @Nullable URI node, int status, @Nullable Throwable cause) {
		super(message, node, status, cause);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return true;
	}

}
