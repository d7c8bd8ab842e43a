package io.quorumkv.service.paxos;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.paxos.Messages.Vote;
import io.quorumkv.service.replication.Replicas;
import io.quorumkv.service.replication.ReplicationService;
import io.quorumkv.storage.Entry;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.BeanFactory;

/**
 * The deliberately broken Paxos of {@code BrokenBuildIT} (packed with
 * {@code io.quorumkv.brokenbuild} into the test-only jar, never part of the service; it
 * lives in this package to reach the package-level beans it replaces):
 * <ul>
 * <li>{@code paxos-skip-prepare}: the coordinator's network answers a prepare without
 * asking the acceptor, with the key's value as a quorum read finds it, promised and
 * nothing in progress: a proposal goes out under a ballot no majority promised, and a
 * proposal in progress is never completed;</li>
 * <li>{@code paxos-slow-proposals}: one round in four (by its ballot) sends its proposal
 * 20 s after its promises, as a coordinator stalled that long would (a slow coordinator,
 * which Paxos must tolerate: the control of the next mode);</li>
 * <li>{@code paxos-forget-promise}: the same slow rounds, and a node started in this mode
 * keeps its acceptor table in memory only ({@link AcceptorTable#inMemory}): after a
 * restart it has forgotten every promise and every accepted proposal.</li>
 * </ul>
 */
public final class BrokenPaxos {

	static final String SKIP_PREPARE = "paxos-skip-prepare";

	static final String SLOW_PROPOSALS = "paxos-slow-proposals";

	static final String FORGET_PROMISE = "paxos-forget-promise";

	/** How long a slow round waits between its promises and its proposal. */
	static final Duration SLOW = Duration.ofSeconds(20);

	private BrokenPaxos() {
	}

	/**
	 * The bean to use instead of {@code bean} (itself unless it is a Paxos bean this mode
	 * breaks).
	 * @param mode the current mode (re-read as it changes)
	 */
	public static Object postProcess(Object bean, String name, Supplier<String> mode, BeanFactory beans) {
		if (bean instanceof Network network && name.equals("paxosNetwork")) {
			System.out.println("BROKEN BUILD: the Paxos coordinator's network skips the prepare in " + SKIP_PREPARE
					+ ", proposes late in " + SLOW_PROPOSALS + " and " + FORGET_PROMISE);
			return new BrokenNetwork(network, mode, () -> beans.getBean(ReplicationService.class));
		}
		if (bean instanceof AcceptorTable table && name.equals("acceptorTable") && mode.get().equals(FORGET_PROMISE)) {
			System.out.println("BROKEN BUILD: the Paxos acceptor table is in memory only (" + FORGET_PROMISE + ")");
			PaxosProperties paxos = beans.getBean(PaxosProperties.class);
			HttpProperties http = beans.getBean(HttpProperties.class);
			table.close();
			return AcceptorTable.inMemory(paxos.maxRows(), paxos.maxBytes().toBytes(),
					(int) http.maxKeySize().toBytes());
		}
		return bean;
	}

	/**
	 * A coordinator's network whose prepares never reach an acceptor, or whose proposals
	 * go out late, as the mode says.
	 */
	private static final class BrokenNetwork implements Network {

		private final Network delegate;

		private final Supplier<String> mode;

		private final Supplier<ReplicationService> replication;

		BrokenNetwork(Network delegate, Supplier<String> mode, Supplier<ReplicationService> replication) {
			this.delegate = delegate;
			this.mode = mode;
			this.replication = replication;
		}

		@Override
		public Targets acceptors(byte[] key) {
			return this.delegate.acceptors(key);
		}

		@Override
		public Mono<Promise> prepare(Node acceptor, Ballot ballot, byte[] key) {
			if (!this.mode.get().equals(SKIP_PREPARE)) {
				return this.delegate.prepare(acceptor, ballot, key);
			}
			ReplicationService replication = this.replication.get();
			return replication.get(key, Replicas.quorum(replication.replicationFactor()))
				.map(Optional::of)
				.defaultIfEmpty(Optional.empty())
				.map((found) -> new Promise(true, ballot, null, found.orElse(null), false, Ballot.NONE));
		}

		@Override
		public Mono<Vote> propose(Node acceptor, Proposal proposal) {
			String mode = this.mode.get();
			if ((mode.equals(SLOW_PROPOSALS) || mode.equals(FORGET_PROMISE)) && proposal.ballot().micros() % 4 == 0) {
				return Mono.delay(SLOW).then(Mono.defer(() -> this.delegate.propose(acceptor, proposal)));
			}
			return this.delegate.propose(acceptor, proposal);
		}

		@Override
		public Mono<Void> store(Entry entry) {
			return this.delegate.store(entry);
		}

		@Override
		public Mono<Boolean> commit(Node acceptor, Ballot ballot, Entry entry) {
			return this.delegate.commit(acceptor, ballot, entry);
		}

	}

}
