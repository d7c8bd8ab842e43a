package io.quorumkv.service.membership;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.membership.AgreementLog.Outcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

/**
 * This node's side of agreeing on ring changes (docs/membership.md, "Agreement"): it
 * prepares at most one proposal at a time, and only one made against its own epoch and
 * cluster; it adopts a proposal's ring when its coordinator commits it, and drops it when
 * its coordinator aborts it. Everything it decides is written to its {@link AgreementLog}
 * before it answers, and runs on the node's ring thread.
 */
public final class Participant {

	private static final Log logger = LogFactory.getLog(Participant.class);

	private static final tools.jackson.databind.json.JsonMapper JSON = tools.jackson.databind.json.JsonMapper.shared();

	private final ClusterState state;

	private final RingSync sync;

	private final Path folder;

	private final BooleanSupplier busy;

	/** Runs before this node votes on a proposal ({@link Cleanup#noteIfNewcomer}). */
	private final Function<Proposal, Mono<Void>> beforeVote;

	/** Proposals this process coordinates right now: their outcome is not decided yet. */
	private final Set<String> driving = ConcurrentHashMap.newKeySet();

	private volatile AgreementLog log;

	Participant(ClusterState state, RingSync sync, Path folder, BooleanSupplier busy,
			Function<Proposal, Mono<Void>> beforeVote) {
		this.state = state;
		this.sync = sync;
		this.folder = folder;
		this.busy = busy;
		this.beforeVote = beforeVote;
		this.log = AgreementLog.read(folder);
		Proposal pending = this.log.pending();
		if (pending != null) {
			logger.warn("Restarted with a prepared " + pending.describe() + ": refusing other proposals until its "
					+ "coordinator says how it ended");
		}
	}

	/** The prepared proposal, if any. */
	public java.util.Optional<Proposal> pending() {
		return java.util.Optional.ofNullable(this.log.pending());
	}

	Set<String> driving() {
		return this.driving;
	}

	// --- the ring protocol's messages, as the internal routes receive them -------------

	/**
	 * {@code POST /internal/v0/ring/prepare}.
	 * @throws IllegalArgumentException when the body is not a proposal
	 */
	public Mono<Vote> prepareMessage(String json) {
		return Mono.defer(() -> prepare(Proposal.fromJson(json)));
	}

	/** {@code POST /internal/v0/ring/commit}: {@code {"id":…,"ring":…}}. */
	public Mono<Void> commitMessage(String json) {
		return Mono.defer(() -> {
			tools.jackson.databind.JsonNode root = JSON.readTree(json);
			return commit(root.required("id").stringValue(),
					io.quorumkv.service.cluster.RingJson.read(root.required("ring")));
		});
	}

	/** {@code POST /internal/v0/ring/abort}: {@code {"id":…}}. */
	public Mono<Void> abortMessage(String json) {
		return Mono.defer(() -> abort(JSON.readTree(json).required("id").stringValue()));
	}

	/** {@code GET /internal/v0/ring/outcome?id=}: {@code {"outcome":…}}. */
	public Mono<String> outcomeMessage(String id) {
		return outcome(id).map((outcome) -> JSON.createObjectNode().put("outcome", outcome).toString());
	}

	/** {@code GET /internal/v0/ring/identity}: who this node is and of which ring. */
	public String identityMessage() {
		tools.jackson.databind.node.ObjectNode root = JSON.createObjectNode();
		root.put("id", this.state.self().id());
		root.put("url", this.state.self().base());
		Ring ring = this.state.ring().orElse(null);
		if (ring != null) {
			root.put("clusterId", ring.clusterId());
		}
		else {
			root.putNull("clusterId");
		}
		root.put("epoch", this.state.epoch());
		return root.toString();
	}

	/** Prepares a proposal (after catching up when it was made against a newer epoch). */
	Mono<Vote> prepare(Proposal proposal) {
		long mine = this.state.epoch();
		Mono<Void> caughtUp = (mine > 0 && proposal.baseEpoch() > mine)
				? this.sync.catchUp(proposal.coordinator(), proposal.baseEpoch()).onErrorResume((error) -> Mono.empty())
				: Mono.empty();
		// A failure here only costs the newcomer its skipped clean-up: it votes anyway.
		Mono<Void> noted = Mono.defer(() -> this.beforeVote.apply(proposal)).onErrorResume((error) -> {
			logger.warn("Before voting on " + proposal.describe() + ": " + error.getMessage());
			return Mono.empty();
		});
		return caughtUp.then(noted).then(onRingThread(() -> prepareNow(proposal)));
	}

	private Vote prepareNow(Proposal proposal) {
		Ring mine = this.state.ring().orElse(null);
		Proposal pending = this.log.pending();
		if (pending != null && pending.id().equals(proposal.id())) {
			return new Vote.Accepted();
		}
		long epoch = (mine != null) ? mine.epoch() : 0;
		Ring next = proposal.next();
		if (mine == null) {
			if (!next.isMember(this.state.self().id()) && next.nodeAt(this.state.self().url()).isEmpty()) {
				return refuse(proposal, "this node has no ring, and the proposal does not add it", 0);
			}
		}
		else if (!mine.clusterId().equals(next.clusterId())) {
			String reason = "this node belongs to cluster " + mine.clusterId() + " (epoch " + mine.epoch()
					+ "); the proposal is of cluster " + next.clusterId()
					+ ": a node of another cluster cannot join (wipe its data folder first)";
			logger.warn("Refused " + proposal.describe() + ": " + reason);
			return new Vote.Refused(reason, epoch);
		}
		else if (mine.epoch() != proposal.baseEpoch()) {
			return refuse(proposal, "stale proposal: made against epoch " + proposal.baseEpoch()
					+ ", this node is at epoch " + mine.epoch(), epoch);
		}
		if (pending != null) {
			return refuse(proposal, "busy: this node has prepared " + pending.describe(), epoch);
		}
		if (this.busy.getAsBoolean()) {
			return refuse(proposal, "busy: this node is cleaning up after the last change", epoch);
		}
		update(this.log.withPending(proposal));
		logger.info("Prepared " + proposal.describe());
		return new Vote.Accepted();
	}

	private static Vote refuse(Proposal proposal, String reason, long epoch) {
		logger.info("Refused " + proposal.describe() + ": " + reason);
		return new Vote.Refused(reason, epoch);
	}

	/**
	 * Adopts a committed proposal's ring (at once when it is this node's own decision)
	 * and records the outcome. Completes once the ring is in use here and the requests of
	 * the previous one are done.
	 */
	Mono<Void> commit(String id, Ring ring) {
		return this.state.install(ring).then(onRingThread(() -> {
			if (this.log.pending() != null || this.log.outcome(id).isEmpty()) {
				update(this.log.decided(id, Outcome.COMMITTED));
			}
			return true;
		})).then();
	}

	/** Drops a proposal its coordinator aborted. */
	Mono<Void> abort(String id) {
		return onRingThread(() -> {
			Proposal pending = this.log.pending();
			if (pending != null && pending.id().equals(id)) {
				logger.info("Aborted " + pending.describe());
				update(this.log.decided(id, Outcome.ABORTED));
			}
			return true;
		}).then();
	}

	/**
	 * The outcome of a proposal as this node knows it: {@code committed},
	 * {@code aborted}, {@code pending} (its coordinator is still at it) or
	 * {@code unknown}. The coordinator of a proposal it no longer drives (it restarted)
	 * and never committed decides to abort it here.
	 */
	Mono<String> outcome(String id) {
		return onRingThread(() -> {
			java.util.Optional<Outcome> known = this.log.outcome(id);
			if (known.isPresent()) {
				return known.get().label();
			}
			Proposal pending = this.log.pending();
			if (pending == null || !pending.id().equals(id)) {
				return this.driving.contains(id) ? "pending" : "unknown";
			}
			if (this.state.epoch() >= pending.next().epoch()) {
				update(this.log.decided(id, Outcome.COMMITTED));
				return Outcome.COMMITTED.label();
			}
			if (pending.coordinator().id().equals(this.state.self().id()) && !this.driving.contains(id)) {
				logger.warn("Aborting " + pending.describe() + ": its coordinator (this node) restarted before "
						+ "deciding it");
				update(this.log.decided(id, Outcome.ABORTED));
				return Outcome.ABORTED.label();
			}
			return "pending";
		});
	}

	/**
	 * Clears a prepared proposal that this node has moved past (its epoch is newer than
	 * the proposal's base): whatever its outcome, it can no longer commit here.
	 */
	Mono<Boolean> forgetIfPassed() {
		return onRingThread(() -> {
			Proposal pending = this.log.pending();
			if (pending != null && this.state.epoch() > pending.baseEpoch()) {
				Outcome outcome = (this.state.epoch() >= pending.next().epoch() && this.state.ring()
					.map((r) -> r.epoch() == pending.next().epoch() && r.equals(pending.next()))
					.orElse(false)) ? Outcome.COMMITTED : Outcome.ABORTED;
				update(this.log.decided(pending.id(), outcome));
				return true;
			}
			return false;
		});
	}

	/** The coordinator of the pending proposal, when it is another node. */
	java.util.Optional<Node> pendingCoordinator() {
		Proposal pending = this.log.pending();
		return (pending != null && !pending.coordinator().id().equals(this.state.self().id()))
				? java.util.Optional.of(pending.coordinator()) : java.util.Optional.empty();
	}

	/** Records an outcome learned from the coordinator. */
	Mono<Void> learned(String id, Outcome outcome) {
		return onRingThread(() -> {
			update(this.log.decided(id, outcome));
			return true;
		}).then();
	}

	private void update(AgreementLog next) {
		next.write(this.folder);
		this.log = next;
	}

	private <T> Mono<T> onRingThread(java.util.concurrent.Callable<T> work) {
		return Mono.fromCallable(work).subscribeOn(this.state.ringThread());
	}

	Duration age(Proposal proposal) {
		return Duration.ofMillis(Math.max(0, System.currentTimeMillis() - proposal.createdAtMillis()));
	}

}
