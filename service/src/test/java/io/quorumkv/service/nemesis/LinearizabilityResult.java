package io.quorumkv.service.nemesis;

import java.util.List;
import java.util.stream.Collectors;

/**
 * What {@link LinearizabilityChecker} found: every key linearizable, a counter-example,
 * or no verdict because the search ran out of its budget (never read as linearizable).
 */
sealed interface LinearizabilityResult {

	/** Every key's operations have a linearization. */
	record Linearizable(int keys, int operations, long steps) implements LinearizabilityResult {

	}

	/**
	 * A key whose operations have no linearization.
	 *
	 * @param key the key
	 * @param prefix the longest order of its operations the search could linearize, in
	 * that order
	 * @param unplaced an operation that could not be placed after that prefix although
	 * its answer came before anything else could go
	 * @param states the states the register may be in after the prefix
	 */
	record Violation(String key, List<LinearizabilityOp> prefix, LinearizabilityOp unplaced,
			List<RegisterModel.State> states) implements LinearizabilityResult {

		public Violation {
			prefix = List.copyOf(prefix);
			states = List.copyOf(states);
		}

		/** The counter-example for people: the last of the prefix, the states, the op. */
		String explain() {
			int shown = Math.min(this.prefix.size(), 10);
			String tail = this.prefix.subList(this.prefix.size() - shown, this.prefix.size())
				.stream()
				.map((op) -> "  " + op)
				.collect(Collectors.joining("\n"));
			return "key " + this.key + " is not linearizable: after " + this.prefix.size()
					+ " operations linearized (the last " + shown + ":\n" + tail + "\n) the register is one of "
					+ this.states + ", and " + this.unplaced + " cannot be placed there";
		}

	}

	/** The search for a key spent its budget without a verdict. */
	record Unknown(String key, String reason) implements LinearizabilityResult {

	}

}
