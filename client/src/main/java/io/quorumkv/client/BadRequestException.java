package io.quorumkv.client;

import java.net.URI;

import org.jspecify.annotations.Nullable;

/**
 * The node refused the request as malformed (HTTP 400): an empty or over-long key, a key
 * that is not valid UTF-8, a {@link Replicas} whose {@code from} exceeds the cluster's
 * replication factor, a bad range. Retrying cannot help; the message has the node's
 * reason.
 */
public final class BadRequestException extends QuorumKvException {

	BadRequestException(String message, @Nullable URI node, int status, @Nullable Throwable cause) {
		super(message, node, status, cause);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return false;
	}

}
