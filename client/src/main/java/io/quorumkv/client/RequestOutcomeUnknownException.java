package io.quorumkv.client;

import java.net.URI;

import org.jspecify.annotations.Nullable;

/**
 * The request was sent (or may have been) but no answer came: the response timeout passed
 * or the connection was lost. A write may or may not have been applied; a read is retried
 * by the client, a write only when the caller opted in
 * ({@link RetryPolicy#retryWrites()}).
 */
public final class RequestOutcomeUnknownException extends QuorumKvException {

	RequestOutcomeUnknownException(String message, @Nullable URI node, int status, @Nullable Throwable cause) {
		super(message, node, status, cause);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return true;
	}

}
