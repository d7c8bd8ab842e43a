package io.quorumkv.service.nemesis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import org.jspecify.annotations.Nullable;

import io.quorumkv.service.nemesis.RegisterModel.Condition;
import io.quorumkv.service.nemesis.RegisterModel.Delete;
import io.quorumkv.service.nemesis.RegisterModel.DeleteIfVersion;
import io.quorumkv.service.nemesis.RegisterModel.Done;
import io.quorumkv.service.nemesis.RegisterModel.Input;
import io.quorumkv.service.nemesis.RegisterModel.Observed;
import io.quorumkv.service.nemesis.RegisterModel.Output;
import io.quorumkv.service.nemesis.RegisterModel.PutIfAbsent;
import io.quorumkv.service.nemesis.RegisterModel.PutIfVersion;
import io.quorumkv.service.nemesis.RegisterModel.Read;
import io.quorumkv.service.nemesis.RegisterModel.State;
import io.quorumkv.service.nemesis.RegisterModel.Write;

/**
 * Histories for {@link LinearizabilityChecker}'s tests, made by running concurrent
 * clients against registers that apply each operation atomically at one instant between
 * its call and its answer (so every history made is linearizable), and the mutation that
 * makes one not.
 */
final class LinearizabilityHistories {

	private LinearizabilityHistories() {
	}

	/**
	 * A history of {@code operations} operations by {@code clients} clients over
	 * {@code keys} keys. Each client runs one operation at a time: called, applied at a
	 * later tick, answered at a later one; with probability {@code unanswered} the answer
	 * is lost (half of those were never applied). Values and versions are unique; one
	 * write in five does not learn its version. Conditions name the version the client
	 * last saw, sometimes an older one.
	 */
	static List<LinearizabilityOp> generate(long seed, int operations, int clients, int keys, double unanswered) {
		return new Run(new Random(seed), clients, keys, unanswered).run(operations);
	}

	/**
	 * The history with one read's answer replaced by a value that no linearization lets
	 * it see: a value written (by {@code w}) and overwritten (by {@code w2}) before the
	 * read began, {@code w} answered before {@code w2} was called; empty when the history
	 * has no such read.
	 */
	static Optional<List<LinearizabilityOp>> staleRead(List<LinearizabilityOp> history, Random random) {
		List<Integer> reads = new ArrayList<>();
		for (int i = 0; i < history.size(); i++) {
			if (history.get(i).input() instanceof Read && history.get(i).answered()) {
				reads.add(i);
			}
		}
		Collections.shuffle(reads, random);
		for (int index : reads) {
			LinearizabilityOp read = history.get(index);
			for (LinearizabilityOp overwrite : history) {
				if (!overwrite.key().equals(read.key()) || overwrite.ret() >= read.call() || !changed(overwrite)) {
					continue;
				}
				for (LinearizabilityOp write : history) {
					String value = written(write);
					if (value != null && write.key().equals(read.key()) && write.ret() < overwrite.call()) {
						List<LinearizabilityOp> mutated = new ArrayList<>(history);
						mutated.set(index, read.withOutput(new Observed(value, version(write))));
						return Optional.of(mutated);
					}
				}
			}
		}
		return Optional.empty();
	}

	/** Whether {@code op} was answered and changed the register. */
	private static boolean changed(LinearizabilityOp op) {
		return switch (op.input()) {
			case Write write -> op.answered();
			case Delete delete -> op.answered();
			case Read read -> false;
			default -> op.output() instanceof Condition condition && condition.held();
		};
	}

	/** The value {@code op} was answered to have written, else null. */
	private static @Nullable String written(LinearizabilityOp op) {
		if (!changed(op)) {
			return null;
		}
		return switch (op.input()) {
			case Write write -> write.value();
			case PutIfVersion put -> put.value();
			case PutIfAbsent put -> put.value();
			default -> null;
		};
	}

	private static long version(LinearizabilityOp op) {
		return switch (op.input()) {
			case Write write -> write.version();
			case PutIfVersion put -> put.version();
			case PutIfAbsent put -> put.version();
			default -> throw new IllegalArgumentException("not a write of a value: " + op);
		};
	}

	private static final class Run {

		private final Random random;

		private final int keys;

		private final double unanswered;

		private final Pending[] pending;

		/** Per client and key, the last version the client saw. */
		private final long[][] seen;

		private final Map<String, State> registers = new HashMap<>();

		private final List<LinearizabilityOp> history = new ArrayList<>();

		private long versions;

		private long values;

		private long ids;

		private long time;

		Run(Random random, int clients, int keys, double unanswered) {
			this.random = random;
			this.keys = keys;
			this.unanswered = unanswered;
			this.pending = new Pending[clients];
			this.seen = new long[clients][keys];
		}

		private static final class Pending {

			final long id;

			final int key;

			final int kind;

			final long call;

			final boolean lost;

			@Nullable Input input;

			@Nullable Output output;

			boolean applied;

			Pending(long id, int key, int kind, long call, boolean lost) {
				this.id = id;
				this.key = key;
				this.kind = kind;
				this.call = call;
				this.lost = lost;
			}

		}

		List<LinearizabilityOp> run(int operations) {
			int issued = 0;
			int open = 0;
			while (issued < operations || open > 0) {
				this.time++;
				int client = this.random.nextInt(this.pending.length);
				Pending op = this.pending[client];
				if (op == null) {
					if (issued < operations) {
						this.pending[client] = new Pending(this.ids++, this.random.nextInt(this.keys),
								this.random.nextInt(100), this.time, this.random.nextDouble() < this.unanswered);
						issued++;
						open++;
					}
				}
				else if (!op.applied) {
					if (op.lost && this.random.nextBoolean()) {
						finish(client, op, neverApplied(op));
						open--;
					}
					else {
						apply(client, op);
					}
				}
				else {
					finish(client, op, op.input);
					open--;
				}
			}
			return this.history;
		}

		private void finish(int client, Pending op, @Nullable Input input) {
			this.pending[client] = null;
			this.history.add(new LinearizabilityOp(op.id, client, "k" + op.key, input, op.lost ? null : op.output,
					op.call, this.time));
		}

		/** An operation lost before it reached the register: its input, never applied. */
		private Input neverApplied(Pending op) {
			long version = ++this.versions;
			String value = "v" + (++this.values);
			return switch (op.kind / 20) {
				case 0, 1 -> new Read();
				case 2 -> new Write(value, version);
				case 3 -> new PutIfVersion(value, this.seen[0][op.key] + 1, version);
				default -> new PutIfAbsent(value, version);
			};
		}

		private void apply(int client, Pending op) {
			op.applied = true;
			String key = "k" + op.key;
			State state = this.registers.getOrDefault(key, State.EMPTY);
			long known = this.seen[client][op.key];
			long expected = (known > 0 && this.random.nextInt(8) == 0) ? this.random.nextLong(known) + 1 : known;
			long version = ++this.versions;
			String value = "v" + (++this.values);
			long reported = (this.random.nextInt(5) == 0) ? RegisterModel.UNKNOWN : version;
			int kind = op.kind;
			if (kind < 40) {
				op.input = new Read();
				op.output = new Observed(state.value(), state.version());
				this.seen[client][op.key] = state.version();
				return;
			}
			State next;
			if (kind < 55) {
				op.input = new Write(value, reported);
				op.output = new Done();
				next = new State(value, version);
			}
			else if (kind < 60) {
				op.input = new Delete();
				op.output = new Done();
				next = State.EMPTY;
			}
			else if (expected > 0 && kind < 85) {
				boolean held = state.present() && state.version() == expected;
				op.input = new PutIfVersion(value, expected, reported);
				op.output = new Condition(held, state.version());
				next = held ? new State(value, version) : state;
			}
			else if (expected == 0 || kind < 95) {
				boolean held = !state.present();
				op.input = new PutIfAbsent(value, reported);
				op.output = new Condition(held, state.version());
				next = held ? new State(value, version) : state;
			}
			else {
				boolean held = state.present() && state.version() == expected;
				op.input = new DeleteIfVersion(expected);
				op.output = new Condition(held, state.version());
				next = held ? State.EMPTY : state;
			}
			this.registers.put(key, next);
			this.seen[client][op.key] = (next == state || reported != RegisterModel.UNKNOWN) ? next.version() : 0;
		}

	}

}
