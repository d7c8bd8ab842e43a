package io.quorumkv.service.replication;

/** A replica answered, but not with success (a 5xx, an unexpected status). */
class PeerException extends RuntimeException {

	PeerException(String message) {
		super(message, null, false, false);
	}

}
