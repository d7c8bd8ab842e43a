package io.quorumkv.service.nemesis;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Decides whether a history of operations on registers ({@link RegisterModel}) is
 * linearizable: whether each operation can be given one instant between its call and its
 * answer such that the operations, run one by one in that order, answer what they
 * answered.
 *
 * <p>
 * Keys are independent objects, and a history is linearizable exactly when each key's
 * part is (linearizability is compositional, "P-compositionality"), so each key is
 * searched alone. The search is Wing and Gong's, with Lowe's memoisation, as Porcupine
 * runs it: the calls and answers form one list in time order; the search walks it,
 * placing ("lifting") the first call whose operation the model accepts in the current
 * state and starting again from the head, and when it meets an answer whose call is still
 * in the list (that operation could not be placed before its answer) it undoes the last
 * placement and tries the next call after it. A pair (operations placed, state) already
 * explored is never explored again, which bounds the search by the number of distinct
 * pairs instead of orders. The state is the set of states the register may be in (the
 * model is not deterministic: an unanswered operation may have taken effect or not, and a
 * version not yet seen is learnt), so a pair is (bits, set of states).
 *
 * <p>
 * A history holds what the clients saw: an operation answered (a read, a write
 * acknowledged, a condition held or failed with 412), or not answered at all (timed out,
 * connection lost: it may take effect at any time after its call, or never). An operation
 * refused before it could take effect (400, 501) is left out by whoever builds the
 * history.
 *
 * <p>
 * Each key's search is bounded by a {@link Budget}; a key that spends it is
 * {@link LinearizabilityResult.Unknown}, never linearizable. A key that has no
 * linearization gives the longest order the search placed and the operation it could not
 * place next ({@link LinearizabilityResult.Violation}).
 */
final class LinearizabilityChecker {

	/**
	 * How far the search of one key may go.
	 *
	 * @param maxSteps entries of the list visited
	 * @param maxStates (operations placed, state) pairs remembered
	 */
	record Budget(long maxSteps, int maxStates) {

		static final Budget DEFAULT = new Budget(20_000_000, 2_000_000);

	}

	private final Budget budget;

	LinearizabilityChecker(Budget budget) {
		this.budget = budget;
	}

	/**
	 * The verdict on {@code history}, every key starting absent: the first key (in key
	 * order) found not linearizable, else the first whose search ran out of budget, else
	 * linearizable.
	 */
	LinearizabilityResult check(List<LinearizabilityOp> history) {
		Map<String, List<LinearizabilityOp>> byKey = new TreeMap<>();
		Set<Long> ids = new HashSet<>();
		for (LinearizabilityOp op : history) {
			if (!ids.add(op.id())) {
				throw new IllegalArgumentException("two operations #" + op.id());
			}
			if (op.input() instanceof RegisterModel.Read && !op.answered()) {
				continue; // a read without an answer constrains nothing
			}
			byKey.computeIfAbsent(op.key(), (key) -> new ArrayList<>()).add(op);
		}
		LinearizabilityResult.Unknown unknown = null;
		long steps = 0;
		for (Map.Entry<String, List<LinearizabilityOp>> key : byKey.entrySet()) {
			LinearizabilitySearch search = new LinearizabilitySearch(key.getKey(),
					LinearizabilityNarrowing.withoutUnseenWrites(key.getValue()), this.budget);
			LinearizabilityResult result = search.run();
			steps += search.steps();
			if (result instanceof LinearizabilityResult.Violation) {
				return result;
			}
			if (result instanceof LinearizabilityResult.Unknown spent && unknown == null) {
				unknown = spent;
			}
		}
		return (unknown != null) ? unknown
				: new LinearizabilityResult.Linearizable(byKey.size(), history.size(), steps);
	}

}
