package io.quorumkv.service.peer;

/** A replica answered, but not with success (a 5xx, an unexpected status). */
public class PeerException extends RuntimeException {

	public PeerException(String message) {
		super(message, null, false, false);
	}

}
