package io.quorumkv.service.paxos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.paxos.Messages.Vote;
import io.quorumkv.service.paxos.Paxos.Outcome;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Interleavings of rounds on three acceptors X, Y, Z (0, 1, 2) set up message by message:
 * each call runs at once on the test's thread, and a node cut off ({@link #cut}) answers
 * nothing. What the random simulation ({@link ProposerSimulationTest}) finds only by
 * chance is here every time.
 */
class ProposerScenarioTest {

	private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);

	private static final int X = 0;

	private static final int Y = 1;

	private static final int Z = 2;

	private final Scripted network = new Scripted();

	/** One clock for every proposer: each ballot above every other. */
	private long time = 100;

	/** The backoffs of the proposers, each waiting until the test ends it. */
	private final List<Sinks.Empty<Void>> pauses = new ArrayList<>();

	private static Entry value(String value, long timestamp) {
		return Entry.value(KEY, value.getBytes(StandardCharsets.UTF_8), timestamp);
	}

	/** Cuts off {@code nodes} (none: every node reachable again). */
	private void cut(int... nodes) {
		this.network.cut.clear();
		Arrays.stream(nodes).forEach(this.network.cut::add);
	}

	/**
	 * E1 accepted on X only (b1); E' proposed fresh above it (b') and accepted on Y only;
	 * a round on X and Z completes E1. A round on Y and Z must then not take E' (its
	 * timestamp above E1's) for a proposal in progress and apply it after E1 against a
	 * condition evaluated before it. And the completed E1 keeps its own timestamp.
	 */
	@Test
	void aStaleProposalOnAMinorityIsNotCompletedAfterANewerChoiceAndACompletionKeepsItsTimestamp() {
		Ballot b1 = new Ballot(10, "p1");
		Entry e1 = value("e1", 10);
		accepted(X, new Proposal(b1, e1));
		Ballot fresh = new Ballot(20, "p2");
		accepted(Y, new Proposal(fresh, value("e'", 20)));
		cut(Y);
		Outcome completed = proposer("p3").read(KEY).block();
		assertThat(completed).isEqualTo(new Outcome.Read(e1));
		assertThat(this.network.stored(X)).isEqualTo(e1);
		assertThat(this.network.stored(Z)).isEqualTo(e1);
		cut(X);
		Outcome write = proposer("p4").write(KEY, "new".getBytes(StandardCharsets.UTF_8), 0, (current) -> false)
			.block();
		assertThat(write).isEqualTo(new Outcome.Failed(e1));
		assertThat(proposer("p5").read(KEY).block()).isEqualTo(new Outcome.Read(e1));
		assertThat(this.network.stored(Y)).isEqualTo(e1);
	}

	/**
	 * A request whose proposal reached X only, then was completed by another round on X
	 * and Z, finds it stored in its next round: applied, with the version it proposed
	 * (not a 504 because the version stored is another).
	 */
	@Test
	void aRequestWhoseProposalAnotherRoundCompletedAnswersAppliedWithTheStoredVersion() {
		this.network.onPropose = () -> cut(Y, Z);
		List<Outcome> answers = new ArrayList<>();
		List<Throwable> errors = new ArrayList<>();
		proposer("p1").write(KEY, "mine".getBytes(StandardCharsets.UTF_8), 0, (current) -> current == null)
			.subscribe(answers::add, errors::add);
		assertThat(this.pauses).as("the proposal reached X only: the request backs off").hasSize(1);
		this.network.onPropose = () -> {
		};
		cut(Y);
		Outcome read = proposer("p2").read(KEY).block();
		Entry stored = ((Outcome.Read) read).current();
		assertThat(stored).isNotNull();
		assertThat(new String(stored.value(), StandardCharsets.UTF_8)).isEqualTo("mine");
		cut();
		this.pauses.remove(0).tryEmitEmpty();
		assertThat(errors).isEmpty();
		assertThat(answers).containsExactly(new Outcome.Applied(stored));
		assertThat(this.network.stored(Y)).isEqualTo(stored);
	}

	/** {@code proposal} promised and accepted by {@code node} alone. */
	private void accepted(int node, Proposal proposal) {
		Acceptor acceptor = this.network.acceptors.get(node);
		assertThat(acceptor.prepare(proposal.ballot(), KEY).block().ok()).isTrue();
		assertThat(acceptor.propose(proposal).block().ok()).isTrue();
		this.time = Math.max(this.time, proposal.ballot().micros());
	}

	private Proposer proposer(String id) {
		BallotClock clock = new BallotClock() {

			@Override
			public Ballot next() {
				return new Ballot(++ProposerScenarioTest.this.time, id);
			}

			@Override
			public boolean observe(long micros) {
				ProposerScenarioTest.this.time = Math.max(ProposerScenarioTest.this.time, micros);
				return true;
			}

			@Override
			public long current() {
				return ProposerScenarioTest.this.time;
			}

		};
		Random random = new Random(1);
		return new Proposer(this.network, clock, Duration.ofHours(1), System::nanoTime, random::nextLong, (pause) -> {
			Sinks.Empty<Void> sink = Sinks.empty();
			this.pauses.add(sink);
			return sink.asMono();
		});
	}

	/**
	 * Three acceptors and their storages, called at once; a cut-off node answers nothing.
	 */
	private static final class Scripted implements Network {

		final List<Node> nodes = new ArrayList<>();

		final List<Acceptor> acceptors = new ArrayList<>();

		final List<Map<ByteBuffer, Entry>> stores = new ArrayList<>();

		final Set<Integer> cut = new HashSet<>();

		/** Runs before each proposal is sent (to cut nodes off between two phases). */
		Runnable onPropose = () -> {
		};

		Scripted() {
			for (int i = 0; i < 3; i++) {
				Map<ByteBuffer, Entry> store = new HashMap<>();
				this.stores.add(store);
				this.nodes.add(Node.of("n" + i, "http://127.0.0.1:" + (9000 + i)));
				this.acceptors.add(new Acceptor(AcceptorTable.inMemory(100, 1 << 20, 1024),
						(key) -> Mono.justOrEmpty(store.get(ByteBuffer.wrap(key))), (micros) -> true, () -> 0L,
						1 << 20));
			}
		}

		Entry stored(int node) {
			return this.stores.get(node).get(ByteBuffer.wrap(KEY));
		}

		@Override
		public Targets acceptors(byte[] key) {
			byte[] flags = new byte[3];
			Arrays.fill(flags, (byte) (Targets.OLD | Targets.NEW));
			return new Targets(this.nodes, flags, 3);
		}

		private <T> Mono<T> call(Node node, Supplier<Mono<T>> call) {
			return this.cut.contains(this.nodes.indexOf(node)) ? Mono.error(new TimeoutException("cut off"))
					: Mono.defer(call);
		}

		@Override
		public Mono<Promise> prepare(Node acceptor, Ballot ballot, byte[] key) {
			return call(acceptor, () -> this.acceptors.get(this.nodes.indexOf(acceptor)).prepare(ballot, key));
		}

		@Override
		public Mono<Vote> propose(Node acceptor, Proposal proposal) {
			if (acceptor.equals(this.nodes.get(0))) {
				this.onPropose.run();
			}
			return call(acceptor, () -> this.acceptors.get(this.nodes.indexOf(acceptor)).propose(proposal));
		}

		@Override
		public Mono<Boolean> commit(Node acceptor, Ballot ballot, Entry entry) {
			return call(acceptor, () -> this.acceptors.get(this.nodes.indexOf(acceptor))
				.commit(ballot, entry.key(), entry.timestamp()));
		}

		@Override
		public Mono<Void> store(Entry entry) {
			int stored = 0;
			for (int i = 0; i < 3; i++) {
				if (!this.cut.contains(i)) {
					this.stores.get(i).merge(ByteBuffer.wrap(entry.key()), entry, EntryOrder::max);
					stored++;
				}
			}
			return (stored >= 2) ? Mono.empty() : Mono.error(new TimeoutException("stored at " + stored));
		}

	}

}
