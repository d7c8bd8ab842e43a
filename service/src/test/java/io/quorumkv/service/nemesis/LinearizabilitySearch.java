package io.quorumkv.service.nemesis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The search of one key's operations, as {@link LinearizabilityChecker} describes it.
 */
final class LinearizabilitySearch {

	private final String key;

	private final List<LinearizabilityOp> ops;

	private final LinearizabilityChecker.Budget budget;

	/**
	 * Entry 2i is operation i's call, 2i + 1 its answer; {@link #head} the sentinel.
	 */
	private final int head;

	private final int[] next;

	private final int[] prev;

	/** Per operation, when it must have taken effect by. */
	private final long[] deadlines;

	private long steps;

	/**
	 * The deepest dead end: the operations placed then, in order, and the blocked one.
	 */
	private List<LinearizabilityOp> bestPrefix = List.of();

	private int bestBlocked = -1;

	private Set<RegisterModel.State> bestStates = Set.of();

	LinearizabilitySearch(String key, List<LinearizabilityOp> ops, LinearizabilityChecker.Budget budget) {
		this.key = key;
		this.ops = List.copyOf(ops);
		this.budget = budget;
		this.deadlines = LinearizabilityNarrowing.deadlines(this.ops);
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
		return ((entry & 1) == 0) ? op.call() : this.deadlines[entry >> 1];
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

	long steps() {
		return this.steps;
	}

}
