package io.quorumkv.service.cluster;

/**
 * This node serves no data: it has no ring yet (a newcomer waiting to be joined) or its
 * ring says it was removed. The public API answers 503.
 */
public class NotServingException extends RuntimeException {

	public NotServingException(String message) {
		super(message, null, false, false);
	}

}
