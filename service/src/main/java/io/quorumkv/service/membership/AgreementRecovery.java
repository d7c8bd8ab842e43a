package io.quorumkv.service.membership;

import java.time.Duration;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.membership.AgreementLog.Outcome;
import io.quorumkv.service.replication.InternalApi;
import io.quorumkv.service.replication.PeerClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpMethod;

/**
 * Resolves a prepared proposal whose coordinator went quiet: once the proposal is older
 * than the lease, this node asks its coordinator how it ended (and adopts the ring when
 * it was committed, drops it when it was aborted). While the coordinator cannot be
 * reached, the proposal stays prepared and this node refuses every other: the ring stops
 * changing rather than risk two rings of one epoch. A node that has moved past the
 * proposal's epoch forgets it. The coordinator of a proposal it no longer drives (it
 * restarted) aborts it when asked, or when its own lease runs out.
 */
final class AgreementRecovery implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(AgreementRecovery.class);

	private final ClusterState state;

	private final Participant participant;

	private final RingSync sync;

	private final PeerClient peers;

	private final Duration lease;

	private final Duration callTimeout;

	private final Disposable ticker;

	private volatile boolean running;

	AgreementRecovery(ClusterState state, Participant participant, RingSync sync, PeerClient peers, Duration lease,
			Duration callTimeout) {
		this.state = state;
		this.participant = participant;
		this.sync = sync;
		this.peers = peers;
		this.lease = lease;
		this.callTimeout = callTimeout;
		Duration period = lease.dividedBy(4).compareTo(Duration.ofMillis(200)) < 0 ? Duration.ofMillis(200)
				: lease.dividedBy(4);
		this.ticker = Flux.interval(period, Schedulers.parallel()).subscribe((tick) -> tick());
	}

	private void tick() {
		if (this.running || this.participant.pending().isEmpty()) {
			return;
		}
		this.running = true;
		resolve().doFinally((signal) -> this.running = false).subscribe(null, (error) -> {
			logger.warn("Could not resolve the prepared proposal yet: " + error.getMessage());
		});
	}

	/** One attempt at resolving the prepared proposal. */
	Mono<Void> resolve() {
		return this.participant.forgetIfPassed().flatMap((forgotten) -> {
			Proposal pending = this.participant.pending().orElse(null);
			if (forgotten || pending == null || this.participant.age(pending).compareTo(this.lease) < 0) {
				return Mono.empty();
			}
			Node coordinator = pending.coordinator();
			if (coordinator.id().equals(this.state.self().id())) {
				return this.participant.outcome(pending.id()).then();
			}
			return this.peers
				.ringCall(coordinator, HttpMethod.GET, InternalApi.RING_OUTCOME_PATH + "?id=" + pending.id(), null,
						this.callTimeout)
				.flatMap((reply) -> {
					if (!reply.ok()) {
						return Mono.error(new IllegalStateException(
								"coordinator " + coordinator + " answered " + reply.status() + ": " + reply.body()));
					}
					String outcome = JsonMapper.shared().readTree(reply.body()).path("outcome").asString("");
					return switch (outcome) {
						case "committed" -> this.sync.catchUp(coordinator, pending.next().epoch())
							.then(this.participant.learned(pending.id(), Outcome.COMMITTED));
						case "aborted", "unknown" -> {
							logger.info("Coordinator " + coordinator + " says " + pending.describe() + " is " + outcome
									+ ": dropping it");
							yield this.participant.learned(pending.id(), Outcome.ABORTED);
						}
						default -> Mono.error(new IllegalStateException(
								"coordinator " + coordinator + " is still deciding " + pending.describe()));
					};
				})
				.onErrorMap((error) -> new IllegalStateException(
						pending.describe() + " stays prepared, blocking " + "other changes: " + error.getMessage(),
						error));
		});
	}

	@Override
	public void close() {
		this.ticker.dispose();
	}

}
