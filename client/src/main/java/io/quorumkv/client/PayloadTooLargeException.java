package io.quorumkv.client;

import java.net.URI;

import org.jspecify.annotations.Nullable;

/**
 * The value is larger than the node accepts (HTTP 413;
 * {@code quorumkv.http.max-body-size}, 4 MB by default). Nothing was stored.
 */
public final class PayloadTooLargeException extends QuorumKvException {

	PayloadTooLargeException(String message, @Nullable URI node, int status, @Nullable Throwable cause) {
		super(message, node, status, cause);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return false;
	}

}
