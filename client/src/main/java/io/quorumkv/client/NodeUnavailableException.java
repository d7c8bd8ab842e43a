package io.quorumkv.client;

import java.net.URI;

import org.jspecify.annotations.Nullable;

/**
 * No node could be reached: every connection attempt the retry policy allowed failed
 * (refused, timed out, or the client's connection pool for the node was full). Nothing
 * was sent, so nothing was applied.
 */
public final class NodeUnavailableException extends QuorumKvException {

	NodeUnavailableException(String message, @Nullable URI node, int status, @Nullable Throwable cause) {
		super(message, node, status, cause);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return false;
	}

}
