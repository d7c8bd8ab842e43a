package io.quorumkv.service.replication;

/**
 * Fewer than {@code ack} replicas confirmed a request in time; the public API answers 504
 * Gateway Timeout.
 */
public class QuorumNotReachedException extends RuntimeException {

	public QuorumNotReachedException(String operation, Replicas replicas, int successes) {
		super(operation + " reached " + successes + " of the " + replicas.ack() + " replicas needed (" + replicas + ")",
				null, false, false);
	}

}
