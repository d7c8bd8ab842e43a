package io.quorumkv.service.nemesis;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One operation of a history {@link LinearizabilityChecker} checks: what it asked of one
 * key, what it answered, and when (any monotonic clock, one for the whole history).
 *
 * @param id unique in the history
 * @param client the client that ran it (for people reading a counter-example)
 * @param key the key; keys are independent registers
 * @param input what it asked
 * @param output what it answered; null when no answer came (timed out, connection lost):
 * it may have taken effect at any time after its call, or never
 * @param call when it was invoked
 * @param ret when its answer came; {@link #NEVER} when none did
 */
record LinearizabilityOp(long id, int client, String key, RegisterModel.Input input,
		RegisterModel.@Nullable Output output, long call, long ret) {

	/** The return time of an operation without an answer. */
	static final long NEVER = Long.MAX_VALUE;

	LinearizabilityOp {
		Objects.requireNonNull(key, "key");
		Objects.requireNonNull(input, "input");
		if (output == null) {
			ret = NEVER;
		}
		if (ret < call) {
			throw new IllegalArgumentException("#" + id + " returns at " + ret + " before its call at " + call);
		}
	}

	/** A copy answering {@code output} (a mutation of a history, in tests). */
	LinearizabilityOp withOutput(RegisterModel.@Nullable Output output) {
		return new LinearizabilityOp(this.id, this.client, this.key, this.input, output, this.call,
				(output == null) ? NEVER : this.ret);
	}

	boolean answered() {
		return this.output != null;
	}

	@Override
	public String toString() {
		return "#" + this.id + " c" + this.client + " " + this.key + " " + this.input + " -> "
				+ ((this.output != null) ? this.output : "(no answer)") + " [" + this.call + ".."
				+ ((this.ret == NEVER) ? "" : this.ret) + "]";
	}

}
