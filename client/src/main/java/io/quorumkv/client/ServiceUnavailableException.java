package io.quorumkv.client;

import java.net.URI;
import java.time.Duration;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The node could not serve the request now (HTTP 503): too many requests in flight, its
 * storage's queue full, or its storage failed. {@link #retryAfter()} is the node's
 * {@code Retry-After}, the wait it asks for before the next request. Reads are retried on
 * another node by the client; writes only when the caller opted in
 * ({@link RetryPolicy#retryWrites()}), because a storage failure can break a write's
 * quorum after some replicas took it.
 */
public final class ServiceUnavailableException extends QuorumKvException {

	private final @Nullable Duration retryAfter;

	ServiceUnavailableException(String message, @Nullable URI node, @Nullable Duration retryAfter) {
		super(message, node, 503, null);
		this.retryAfter = retryAfter;
	}

	/** The node's {@code Retry-After} (in seconds on the wire), when it sent one. */
	public Optional<Duration> retryAfter() {
		return Optional.ofNullable(this.retryAfter);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return true;
	}

}
