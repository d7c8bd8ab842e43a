package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.quorumkv.service.support.EntityCluster;
import org.jspecify.annotations.Nullable;

/**
 * The conditional writes of a nemesis phase, beside its plain clients: a few
 * {@link RegisterClients} on keys of their own (their history checked for
 * linearizability) and, when asked, {@link CounterClients} incrementing one counter. Each
 * client sends to the ring's members in turn, so that every node coordinates; the seed of
 * their choices comes from the phase's. Close it to stop every thread (bounded).
 */
final class ConditionalMix implements AutoCloseable {

	/**
	 * A request waits at most this for its answer: past twice the Paxos timeout (5 s).
	 */
	static final Duration TIMEOUT = Duration.ofSeconds(12);

	/** Operations of one register client at most (bounds the checker's search). */
	static final int MAX_PER_CLIENT = 1_000;

	/**
	 * What the conditional writes of a phase came to.
	 *
	 * @param operations the register clients' operations recorded
	 * @param answers their answers by status
	 * @param checked the checker's verdict (linearizable)
	 * @param counter the counter's, null when none ran
	 */
	record Outcome(int operations, Map<String, Integer> answers, LinearizabilityResult.Linearizable checked,
			CounterClients.@Nullable Tally counter) {

		/** Answers 5xx other than 503 and 504, of registers and counter. */
		long otherServerErrors() {
			Map<String, Integer> all = new TreeMap<>(this.answers);
			if (this.counter != null) {
				this.counter.answers().forEach((status, count) -> all.merge(status, count, Integer::sum));
			}
			return all.entrySet()
				.stream()
				.filter((answer) -> answer.getKey().startsWith("5") && !answer.getKey().equals("503")
						&& !answer.getKey().equals("504"))
				.mapToLong(Map.Entry::getValue)
				.sum();
		}

		String summary() {
			String counted = (this.counter == null) ? "no counter" : "counter " + this.counter;
			return this.operations + " conditional operations on " + this.checked.keys() + " keys, linearizable in "
					+ this.checked.steps() + " steps, answers " + this.answers + "; " + counted;
		}

	}

	private final String name;

	private final Duration timeout;

	private final RegisterClients registers;

	private final CounterClients counter;

	private final boolean counting;

	private final AtomicBoolean stopped = new AtomicBoolean();

	private final List<Thread> threads = new ArrayList<>();

	private final List<LinearizabilityOp> history = new CopyOnWriteArrayList<>();

	/** The first failure of a register client's thread (an answer it cannot read). */
	private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();

	/**
	 * Starts {@code registerClients} register clients on three keys and, when
	 * {@code counterClients} is positive, that many counter clients, until
	 * {@code increments} or {@link #stop}.
	 */
	ConditionalMix(NemesisNodes nodes, String name, long seed, int registerClients, int counterClients,
			long increments) {
		this(nodes, name, seed, registerClients, counterClients, increments, List.of(), TIMEOUT);
	}

	/**
	 * The same, each register client sending to one node only when {@code homes} is not
	 * empty (client {@code c} to {@code homes[c % size]}): those of a paused node wait
	 * with it while the others go on, and a node restarted is sent nothing. A request
	 * waits at most {@code timeout} for its answer (past twice the nodes' Paxos timeout).
	 */
	ConditionalMix(NemesisNodes nodes, String name, long seed, int registerClients, int counterClients, long increments,
			List<Integer> homes, Duration timeout) {
		this.name = name;
		this.timeout = timeout;
		EntityCluster cluster = EntityCluster.at(nodes::url, timeout);
		String prefix = name + Long.toHexString(seed & 0xffff);
		this.registers = new RegisterClients(cluster, List.of(prefix + "-cas-a", prefix + "-cas-b", prefix + "-cas-c"));
		this.counter = new CounterClients(cluster, prefix + "-counter", nodes::members, increments);
		this.counting = counterClients > 0;
		for (int c = 0; c < registerClients; c++) {
			int client = c;
			Random random = new Random(seed + client);
			this.threads.add(Thread.ofPlatform().name("register-client-" + c).daemon().start(() -> {
				try {
					this.history.addAll(this.registers.run(client, random, (n) -> {
						List<Integer> members = nodes.members();
						return homes.isEmpty() ? members.get((client + n) % members.size())
								: homes.get(client % homes.size());
					}, () -> !this.stopped.get(), MAX_PER_CLIENT, 20));
				}
				catch (RuntimeException | Error ex) {
					this.failure.compareAndSet(null, ex);
				}
			}));
		}
		if (this.counting) {
			this.counter.start(counterClients, Duration.ofHours(2).toMillis());
		}
		System.out.println("ConditionalMix " + name + ": " + registerClients + " register clients, " + counterClients
				+ " counter clients (" + increments + " increments at most)");
	}

	/** Whether the counter reached its increments (false without a counter). */
	boolean counted() {
		return this.counting && this.counter.done();
	}

	/** Stops the clients; waits for their last operation (each bounded). */
	void stop() {
		if (this.stopped.getAndSet(true)) {
			return;
		}
		this.counter.stop();
		for (Thread thread : this.threads) {
			try {
				thread.join(this.timeout.toMillis() * 2);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Once the cluster is healed: {@link #finish}, then asserts what conditional writes
	 * promise under every fault: conditions held and failed (contention happened), no 5xx
	 * but 503 and 504 (a 412 is an answer like any other), and the counter, if any, at
	 * exactly its acknowledged increments plus the unknown ones some read saw, between
	 * the acknowledged ones and those plus every unknown one, with no count written by
	 * two acknowledged increments ({@link CounterClients}).
	 */
	Outcome finishAndAssert(Path folder, long seed) {
		Outcome outcome = finish(folder, seed);
		String summary = outcome.summary();
		assertThat(outcome.otherServerErrors()).as("5xx other than 503 and 504: %s", summary).isZero();
		assertThat(outcome.answers()).as(summary).containsKeys("201", "412");
		CounterClients.Tally counter = outcome.counter();
		if (counter != null) {
			assertThat(counter.count()).as("the final serial read of the counter: %s", summary).isNotNegative();
			assertThat(counter.acknowledged()).as("increments acknowledged: %s", summary).isPositive();
			assertThat(counter.distinctAcknowledged()).as("no two acknowledged increments wrote one count: %s", summary)
				.isEqualTo(counter.acknowledged());
			assertThat(counter.count()).as("the counter: %s", summary)
				.isBetween(counter.acknowledged(), counter.acknowledged() + counter.unknown())
				.isEqualTo(counter.acknowledged() + counter.appliedUnknown());
		}
		return outcome;
	}

	/**
	 * Once the cluster is healed: stops the clients, reads the counter, checks the
	 * registers' history (an {@link AssertionError} with the counter-example unless
	 * linearizable, the key's operations written to {@code folder}).
	 */
	Outcome finish(Path folder, long seed) {
		stop();
		Throwable failed = this.failure.get();
		if (failed != null) {
			throw new AssertionError("ConditionalMix " + this.name + ": a register client failed", failed);
		}
		CounterClients.Tally tally = this.counting ? this.counter.tally() : null;
		List<LinearizabilityOp> ops = List.copyOf(this.history);
		System.out.println("ConditionalMix " + this.name + ": " + ops.size() + " conditional operations, answers "
				+ this.registers.answers() + ((tally != null) ? "; counter " + tally : "") + "; checking");
		LinearizabilityResult.Linearizable checked = RegisterClients.assertLinearizable(ops,
				"ConditionalMix " + this.name + ", seed " + seed, folder);
		Outcome outcome = new Outcome(ops.size(), this.registers.answers(), checked, tally);
		System.out.println("ConditionalMix " + this.name + " (seed " + seed + "): " + outcome.summary());
		return outcome;
	}

	/**
	 * Once the cluster is healed: stops the clients and gives the checker's verdict on
	 * the registers' history, whatever it is (a broken build expects a violation).
	 */
	LinearizabilityResult check() {
		stop();
		Throwable failed = this.failure.get();
		if (failed != null) {
			throw new AssertionError("ConditionalMix " + this.name + ": a register client failed", failed);
		}
		List<LinearizabilityOp> ops = List.copyOf(this.history);
		LinearizabilityResult result = new LinearizabilityChecker(LinearizabilityChecker.Budget.DEFAULT).check(ops);
		String verdict = switch (result) {
			case LinearizabilityResult.Linearizable ok -> "linearizable in " + ok.steps() + " steps";
			case LinearizabilityResult.Violation violation -> violation.explain();
			case LinearizabilityResult.Unknown unknown ->
				"no verdict on key " + unknown.key() + " (" + unknown.reason() + ")";
		};
		System.out.println("ConditionalMix " + this.name + ": " + ops.size() + " conditional operations, answers "
				+ this.registers.answers() + "; " + verdict);
		return result;
	}

	@Override
	public void close() {
		stop();
	}

}
