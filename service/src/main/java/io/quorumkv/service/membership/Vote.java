package io.quorumkv.service.membership;

/** A participant's answer to a proposal. */
public sealed interface Vote {

	/** The participant has durably prepared the proposal. */
	record Accepted() implements Vote {
	}

	/**
	 * The participant refuses, and says why.
	 *
	 * @param reason why, in a sentence
	 * @param epoch the participant's epoch
	 */
	record Refused(String reason, long epoch) implements Vote {
	}

}
