package io.quorumkv.service.paxos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import io.quorumkv.service.paxos.Paxos.Outcome;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Competing proposers incrementing one counter by compare-and-set over a simulated
 * network that reorders, loses and duplicates messages ({@link SimulatedNetwork}): no
 * increment is lost or applied twice. Each run prints its seed; {@code -Dpaxos.seed=N}
 * replays one.
 */
class ProposerSimulationTest {

	private static final byte[] KEY = "counter".getBytes(StandardCharsets.UTF_8);

	private static final int PROPOSERS = 4;

	private static final int INCREMENTS = 15;

	@RepeatedTest(20)
	void competingProposersNeverLoseAnIncrementUnderLossAndDuplication() {
		long seed = Long.getLong("paxos.seed", new Random().nextLong());
		System.out.println("ProposerSimulationTest seed " + seed);
		run(seed, PROPOSERS, 0.05, 0.05);
	}

	@RepeatedTest(5)
	void competingProposersWithoutFaultsNeverLoseAnIncrement() {
		long seed = Long.getLong("paxos.seed", new Random().nextLong());
		System.out.println("ProposerSimulationTest seed " + seed);
		Counters counters = run(seed, PROPOSERS, 0, 0);
		assertThat(counters.applied).as("seed %d: some increments acknowledged", seed).isNotEmpty();
	}

	@Test
	void aLoneProposerWithoutFaultsHasEveryIncrementAcknowledged() {
		long seed = Long.getLong("paxos.seed", new Random().nextLong());
		System.out.println("ProposerSimulationTest seed " + seed);
		Counters counters = run(seed, 1, 0, 0);
		assertThat(counters.unknown).as("seed %d", seed).isZero();
		assertThat(counters.applied).as("seed %d", seed).hasSize(INCREMENTS);
	}

	/** What the proposers saw, and the check of it against the final value. */
	private static final class Counters {

		final List<Long> applied = new ArrayList<>();

		int unknown;

	}

	private Counters run(long seed, int proposers, double loss, double duplication) {
		SimulatedNetwork network = new SimulatedNetwork(seed, loss, duplication);
		Counters counters = new Counters();
		for (int p = 0; p < proposers; p++) {
			Proposer proposer = proposer(network, "p" + p, seed + p);
			increment(network, proposer, counters, 0, INCREMENTS);
		}
		network.run(5_000_000);
		// The final value, read serially with faults still on, until a read settles.
		Proposer reader = proposer(network, "reader", seed - 1);
		List<Outcome> last = new ArrayList<>();
		for (int i = 0; i < 100 && last.isEmpty(); i++) {
			reader.read(KEY).subscribe(last::add, (error) -> {
			});
			network.run(network.steps() + 1_000_000);
		}
		assertThat(last).as("seed %d: a serial read settles", seed).hasSize(1);
		long value = value(((Outcome.Read) last.get(0)).current());
		System.out.println("seed " + seed + ": counter " + value + ", acknowledged " + counters.applied.size()
				+ ", unknown " + counters.unknown + ", steps " + network.steps());
		Set<Long> distinct = new HashSet<>(counters.applied);
		assertThat(distinct).as("seed %d: every acknowledged increment wrote its own value", seed)
			.hasSameSizeAs(counters.applied);
		assertThat(value)
			.as("seed %d: final value against %d acknowledged and %d unknown increments", seed, counters.applied.size(),
					counters.unknown)
			.isBetween((long) counters.applied.size(), (long) counters.applied.size() + counters.unknown);
		assertThat(counters.applied).as("seed %d", seed).allMatch((v) -> v <= value);
		return counters;
	}

	private static Proposer proposer(SimulatedNetwork network, String id, long seed) {
		long[] clock = { 0 };
		BallotClock ballots = new BallotClock() {

			@Override
			public Ballot next() {
				clock[0] = Math.max(clock[0] + 1, network.steps());
				return new Ballot(clock[0], id);
			}

			@Override
			public boolean observe(long micros) {
				clock[0] = Math.max(clock[0], micros);
				return true;
			}

			@Override
			public long current() {
				return Math.max(clock[0], network.steps());
			}

		};
		Random random = new Random(seed);
		return new Proposer(network, ballots, Duration.ofNanos(200_000), network::steps, random::nextLong,
				(pause) -> network.sleep());
	}

	/**
	 * One proposer's loop: compare-and-set from what it believes the counter holds,
	 * learning the current value from a failed condition; an unknown outcome is counted
	 * and the value read again.
	 */
	private void increment(SimulatedNetwork network, Proposer proposer, Counters counters, long believed, int left) {
		if (left == 0) {
			return;
		}
		byte[] next = Long.toString(believed + 1).getBytes(StandardCharsets.UTF_8);
		proposer.write(KEY, next, 0, (current) -> value(current) == believed).subscribe((outcome) -> {
			switch (outcome) {
				case Outcome.Applied applied -> {
					counters.applied.add(value(applied.entry()));
					increment(network, proposer, counters, believed + 1, left - 1);
				}
				case Outcome.Failed failed -> increment(network, proposer, counters, value(failed.current()), left);
				case Outcome.Read read -> throw new AssertionError("a write answered as a read");
			}
		}, (error) -> {
			counters.unknown++;
			refresh(network, proposer, counters, left - 1);
		});
	}

	private void refresh(SimulatedNetwork network, Proposer proposer, Counters counters, int left) {
		proposer.read(KEY)
			.subscribe((outcome) -> increment(network, proposer, counters, value(((Outcome.Read) outcome).current()),
					left), (error) -> refresh(network, proposer, counters, left));
	}

	private static long value(@Nullable Entry entry) {
		return (entry == null || entry.value() == null) ? 0
				: Long.parseLong(new String(entry.value(), StandardCharsets.UTF_8));
	}

}
