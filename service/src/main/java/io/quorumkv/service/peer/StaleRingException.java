package io.quorumkv.service.peer;

/**
 * A peer refused a call because this node's ring is older than its own (or of another
 * cluster): the peer is up, and this node catches up from it. Not a reason to open the
 * peer's circuit breaker.
 */
public final class StaleRingException extends PeerException {

	public StaleRingException(String message) {
		super(message);
	}

}
