package io.quorumkv.client;

import java.net.URI;

import org.jspecify.annotations.Nullable;

/**
 * The node does not implement the request (HTTP 501): today, a node of a version without
 * conditional writes answers so to {@code putIf}, {@code putIfAbsent}, {@code deleteIf}
 * and {@code update}. Nothing was applied (a node never applies a conditional write
 * unconditionally); the message names the node and gives its reason. Not retried: the
 * request would need nodes that support it.
 */
public final class UnsupportedByNodeException extends QuorumKvException {

	UnsupportedByNodeException(String message, @Nullable URI node, @Nullable Throwable cause) {
		super(message, node, 501, cause);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return false;
	}

}
