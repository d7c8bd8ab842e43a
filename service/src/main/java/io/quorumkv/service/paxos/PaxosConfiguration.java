package io.quorumkv.service.paxos;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.replication.ReplicationService;
import io.quorumkv.service.storage.StorageProperties;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Paxos acceptor of this node (its durable table under the data folder, its service
 * on the replica streams, the purge of its old rows) and the coordinator's entry.
 */
@Configuration(proxyBeanMethods = false)
class PaxosConfiguration {

	private static final Log logger = LogFactory.getLog(PaxosConfiguration.class);

	/** The table's file in the data folder. */
	static final String TABLE_FILE = "paxos-acceptor";

	@Bean(destroyMethod = "close")
	AcceptorTable acceptorTable(StorageProperties storage, PaxosProperties paxos, HttpProperties http)
			throws IOException {
		return AcceptorTable.open(storage.path().resolve(TABLE_FILE), paxos.maxRows(), paxos.maxBytes().toBytes(),
				(int) http.maxKeySize().toBytes(), (int) http.maxBodySize().toBytes());
	}

	@Bean
	Acceptor acceptor(AcceptorTable table, Storage storage, HybridLogicalClock clock, HttpProperties http) {
		return new Acceptor(table, storage::get, clock::observe, System::currentTimeMillis,
				(int) http.maxBodySize().toBytes());
	}

	@Bean
	AcceptorService acceptorService(Acceptor acceptor, HttpProperties http) {
		return new AcceptorService(acceptor, (int) http.maxKeySize().toBytes(), (int) http.maxBodySize().toBytes());
	}

	/** Drops old rows every half grace period, until the context closes. */
	@Bean(destroyMethod = "dispose")
	Disposable acceptorPurge(Acceptor acceptor, PaxosProperties paxos, HybridLogicalClock clock) {
		// The floor stands in for the commits of the rows purged (Acceptor.purge): a
		// request must be settled before its ballot can be below it.
		Duration settled = paxos.timeout().multipliedBy(2).plus(clock.maxSkew().multipliedBy(2));
		if (paxos.grace().compareTo(settled) <= 0) {
			throw new IllegalStateException("quorumkv.paxos.grace (" + paxos.grace()
					+ ") must be above twice quorumkv.paxos.timeout and twice quorumkv.cluster.max-clock-skew ("
					+ settled + ")");
		}
		Duration every = paxos.grace().dividedBy(2);
		return Flux.interval(every, every, Schedulers.parallel())
			.onBackpressureDrop()
			.concatMap((tick) -> acceptor.purge(paxos.grace()).onErrorResume((error) -> {
				logger.warn("Purging the Paxos acceptor table failed: " + error.getMessage());
				return Mono.empty();
			}), 1)
			.subscribe();
	}

	/**
	 * How this node's coordinator reaches the key's acceptors and replicas: its own
	 * acceptor directly, the others' on the replica streams.
	 */
	@Bean
	Network paxosNetwork(ClusterState cluster, Acceptor acceptor, PeerClient peers, ReplicationService replication,
			HttpProperties http) {
		return new PaxosNetwork(cluster, acceptor, peers, replication, (int) http.maxKeySize().toBytes(),
				(int) http.maxBodySize().toBytes());
	}

	@Bean
	Paxos paxos(ClusterState cluster, Network paxosNetwork, HybridLogicalClock clock, PaxosProperties paxos) {
		String self = cluster.self().id();
		BallotClock ballots = new BallotClock() {

			@Override
			public Ballot next() {
				return new Ballot(clock.now(), self);
			}

			@Override
			public boolean observe(long micros) {
				return clock.observe(micros);
			}

			@Override
			public long current() {
				return clock.current();
			}

		};
		return new Paxos(new Proposer(paxosNetwork, ballots, paxos.timeout(), System::nanoTime,
				() -> ThreadLocalRandom.current().nextLong(), (pause) -> Mono.delay(pause, Schedulers.parallel())));
	}

}
