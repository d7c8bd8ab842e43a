package io.quorumkv.service.replication;

import io.quorumkv.service.cluster.Node;

/**
 * A replica needed by a request could not be reached or answered wrongly, and the request
 * cannot do without it (a cluster-wide range needs every node). The public API answers
 * 503: retry later.
 */
public class ReplicaUnavailableException extends RuntimeException {

	public ReplicaUnavailableException(Node node, Throwable cause) {
		super("replica " + node + " is unavailable: " + cause.getClass().getSimpleName()
				+ ((cause.getMessage() != null) ? ": " + cause.getMessage() : ""), cause);
	}

	/**
	 * What a client is told: no replica's address, no Java class (those are in the
	 * message, for the log).
	 */
	public String summary() {
		return "a replica needed by the request is unavailable";
	}

}
