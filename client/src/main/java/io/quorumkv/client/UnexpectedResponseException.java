package io.quorumkv.client;

import java.net.URI;

import org.jspecify.annotations.Nullable;

/**
 * An answer the client does not expect: a status outside the API (405, 408, 500, ...), or
 * a body it cannot decode (a scan record without its separator).
 */
public final class UnexpectedResponseException extends QuorumKvException {

	UnexpectedResponseException(String message, @Nullable URI node, int status, @Nullable Throwable cause) {
		super(message, node, status, cause);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return true;
	}

}
