package io.quorumkv.service.nemesis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
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
			KeySearch search = new KeySearch(key.getKey(), withoutUnseenWrites(key.getValue()), this.budget);
			LinearizabilityResult result = search.run();
			steps += search.steps;
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

	/**
	 * One key's operations without the unanswered writes nothing saw: a write of a value
	 * no answered read returned, with a known version no read, 412 or condition named.
	 * Each unanswered operation doubles the orders the search may have to try, and such a
	 * write changes no verdict: in a linearization where it took effect, no read returned
	 * its value and no condition depended on its version, so until the next write nothing
	 * can have seen it (a failed condition would have named it as current), and dropping
	 * it leaves a linearization; "never took effect" is one of its outcomes anyway. When
	 * some 412 of the key did not record the current version, nothing is dropped (that
	 * failure might need such a write).
	 */
	static List<LinearizabilityOp> withoutUnseenWrites(List<LinearizabilityOp> ops) {
		Set<String> valuesRead = new HashSet<>();
		Set<Long> versionsNamed = new HashSet<>();
		for (LinearizabilityOp op : ops) {
			switch (op.input()) {
				case RegisterModel.PutIfVersion put -> versionsNamed.add(put.expected());
				case RegisterModel.DeleteIfVersion delete -> versionsNamed.add(delete.expected());
				default -> {
				}
			}
			switch (op.output()) {
				case RegisterModel.Observed seen -> {
					if (seen.value() != null) {
						valuesRead.add(seen.value());
					}
					versionsNamed.add(seen.version());
				}
				case RegisterModel.Condition condition when !condition.held() -> {
					if (condition.current() == RegisterModel.UNKNOWN) {
						return ops;
					}
					versionsNamed.add(condition.current());
				}
				case null, default -> {
				}
			}
		}
		List<LinearizabilityOp> kept = new ArrayList<>(ops.size());
		for (LinearizabilityOp op : ops) {
			boolean unseen = !op.answered() && switch (op.input()) {
				case RegisterModel.Write write -> unseen(write.value(), write.version(), valuesRead, versionsNamed);
				case RegisterModel.PutIfVersion put -> unseen(put.value(), put.version(), valuesRead, versionsNamed);
				case RegisterModel.PutIfAbsent put -> unseen(put.value(), put.version(), valuesRead, versionsNamed);
				default -> false;
			};
			if (!unseen) {
				kept.add(op);
			}
		}
		return kept;
	}

	private static boolean unseen(String value, long version, Set<String> valuesRead, Set<Long> versionsNamed) {
		return version != RegisterModel.UNKNOWN && !valuesRead.contains(value) && !versionsNamed.contains(version);
	}

	/** The search of one key's operations. */
	private static final class KeySearch {

		private final String key;

		private final List<LinearizabilityOp> ops;

		private final Budget budget;

		/**
		 * Entry 2i is operation i's call, 2i + 1 its answer; {@link #head} the sentinel.
		 */
		private final int head;

		private final int[] next;

		private final int[] prev;

		private long steps;

		/**
		 * The deepest dead end: the operations placed then, in order, and the blocked
		 * one.
		 */
		private List<LinearizabilityOp> bestPrefix = List.of();

		private int bestBlocked = -1;

		private Set<RegisterModel.State> bestStates = Set.of();

		KeySearch(String key, List<LinearizabilityOp> ops, Budget budget) {
			this.key = key;
			this.ops = List.copyOf(ops);
			this.budget = budget;
			int n = this.ops.size();
			this.head = 2 * n;
			this.next = new int[2 * n + 1];
			this.prev = new int[2 * n + 1];
			List<Integer> entries = new ArrayList<>(2 * n);
			for (int i = 0; i < 2 * n; i++) {
				entries.add(i);
			}
			// by time; at one time a call before an answer (they overlap), then by entry
			entries.sort(Comparator.<Integer>comparingLong(this::time)
				.thenComparingInt((entry) -> entry & 1)
				.thenComparingInt((entry) -> entry));
			int last = this.head;
			for (int entry : entries) {
				this.next[last] = entry;
				this.prev[entry] = last;
				last = entry;
			}
			this.next[last] = -1;
		}

		private long time(int entry) {
			LinearizabilityOp op = this.ops.get(entry >> 1);
			return ((entry & 1) == 0) ? op.call() : op.ret();
		}

		private record Placed(int op, Set<RegisterModel.State> before) {

		}

		private record Explored(BitSet placed, Set<RegisterModel.State> states) {

		}

		LinearizabilityResult run() {
			Set<RegisterModel.State> states = Set.of(RegisterModel.State.EMPTY);
			BitSet placed = new BitSet(this.ops.size());
			ArrayDeque<Placed> stack = new ArrayDeque<>();
			Set<Explored> explored = new HashSet<>();
			int entry = this.next[this.head];
			while (this.next[this.head] != -1) {
				if (++this.steps > this.budget.maxSteps() || explored.size() > this.budget.maxStates()) {
					return new LinearizabilityResult.Unknown(this.key,
							"budget spent: " + (this.steps - 1) + " steps, " + explored.size() + " states, with "
									+ stack.size() + " of " + this.ops.size() + " operations placed");
				}
				int op = entry >> 1;
				if ((entry & 1) == 0) {
					Set<RegisterModel.State> after = successors(states, this.ops.get(op));
					if (!after.isEmpty()) {
						BitSet withOp = (BitSet) placed.clone();
						withOp.set(op);
						if (explored.add(new Explored(withOp, after))) {
							stack.push(new Placed(op, states));
							states = after;
							placed.set(op);
							lift(op);
							entry = this.next[this.head];
							continue;
						}
					}
					entry = this.next[entry];
				}
				else {
					// op's answer, its call still unplaced: a dead end
					if (stack.size() > this.bestPrefix.size() || this.bestBlocked < 0) {
						record(stack, op, states);
					}
					if (stack.isEmpty()) {
						return new LinearizabilityResult.Violation(this.key, this.bestPrefix,
								this.ops.get(this.bestBlocked), List.copyOf(this.bestStates));
					}
					Placed undone = stack.pop();
					states = undone.before();
					placed.clear(undone.op());
					unlift(undone.op());
					entry = this.next[2 * undone.op()];
				}
			}
			return new LinearizabilityResult.Linearizable(1, this.ops.size(), this.steps);
		}

		private void record(ArrayDeque<Placed> stack, int blocked, Set<RegisterModel.State> states) {
			List<LinearizabilityOp> prefix = new ArrayList<>(stack.size());
			for (Iterator<Placed> placed = stack.descendingIterator(); placed.hasNext();) {
				prefix.add(this.ops.get(placed.next().op()));
			}
			this.bestPrefix = prefix;
			this.bestBlocked = blocked;
			this.bestStates = states;
		}

		private static Set<RegisterModel.State> successors(Set<RegisterModel.State> states, LinearizabilityOp op) {
			if (states.size() == 1) {
				return Set.copyOf(RegisterModel.step(states.iterator().next(), op.input(), op.output()));
			}
			Set<RegisterModel.State> after = new LinkedHashSet<>();
			for (RegisterModel.State state : states) {
				after.addAll(RegisterModel.step(state, op.input(), op.output()));
			}
			return Set.copyOf(after);
		}

		/** Takes operation {@code op}'s call and answer out of the list. */
		private void lift(int op) {
			unlink(2 * op);
			unlink(2 * op + 1);
		}

		/** Puts them back, in the reverse order (so each finds its neighbours again). */
		private void unlift(int op) {
			relink(2 * op + 1);
			relink(2 * op);
		}

		private void unlink(int entry) {
			this.next[this.prev[entry]] = this.next[entry];
			if (this.next[entry] != -1) {
				this.prev[this.next[entry]] = this.prev[entry];
			}
		}

		private void relink(int entry) {
			this.next[this.prev[entry]] = entry;
			if (this.next[entry] != -1) {
				this.prev[this.next[entry]] = entry;
			}
		}

	}

}
