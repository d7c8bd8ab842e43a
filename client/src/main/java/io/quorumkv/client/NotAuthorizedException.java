package io.quorumkv.client;

import java.net.URI;

import org.jspecify.annotations.Nullable;

/**
 * The node refused who the client is (HTTP 401: no credential, or one it does not know)
 * or what the credential may do (HTTP 403: a read-only key writing, say). Nothing was
 * applied, and retrying cannot help; {@link #status()} tells which. See
 * {@link Credentials} and {@link TlsSettings}.
 */
public final class NotAuthorizedException extends QuorumKvException {

	NotAuthorizedException(String message, @Nullable URI node, int status, @Nullable Throwable cause) {
		super(message, node, status, cause);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return false;
	}

}
