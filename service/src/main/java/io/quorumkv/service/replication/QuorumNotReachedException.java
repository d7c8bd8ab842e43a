package io.quorumkv.service.replication;

import org.jspecify.annotations.Nullable;

/**
 * Fewer than {@code ack} replicas confirmed a request in time; the public API answers 504
 * Gateway Timeout.
 */
public class QuorumNotReachedException extends RuntimeException {

	private final String summary;

	/**
	 * @param firstFailure what the first replica that failed reported, e.g.
	 * {@code "http://10.0.0.2:8080: timeout"}; null when none failed yet (then the quorum
	 * was given up on for want of time)
	 */
	public QuorumNotReachedException(String operation, Replicas replicas, int successes,
			@Nullable String firstFailure) {
		super(summary(operation, replicas, successes)
				+ ((firstFailure != null) ? "; first failure: " + firstFailure : ""), null, false, false);
		this.summary = summary(operation, replicas, successes);
	}

	/**
	 * What a client is told: how many replicas answered, without which replica failed, at
	 * which address, with what (that is in the message, for the log).
	 */
	public String summary() {
		return this.summary;
	}

	private static String summary(String operation, Replicas replicas, int successes) {
		return operation + " reached " + successes + " of the " + replicas.ack() + " replicas needed (" + replicas
				+ ")";
	}

}
