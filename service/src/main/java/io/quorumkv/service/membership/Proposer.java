package io.quorumkv.service.membership;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.membership.AgreementLog.Outcome;
import io.quorumkv.service.replication.InternalApi;
import io.quorumkv.service.replication.PeerClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.http.HttpMethod;

/**
 * The coordinator's side of agreeing on a ring change (docs/membership.md, "Agreement"):
 * a two-phase commit over every participant, with compare-and-set on the epoch.
 * <ol>
 * <li>The next ring is computed from this node's ring (epoch {@code e}).</li>
 * <li>Every participant, this node included, is asked to prepare it, one after the other
 * in the order of their ids; a participant prepares only a proposal against its own epoch
 * {@code e} and only when it holds no other. The fixed order makes two proposals that
 * race meet first at the same node: one of them wins it and the other is refused there
 * before it has prepared anything that could block the winner.</li>
 * <li>All prepared: this node adopts the ring of epoch {@code e+1} (written to its data
 * folder: this is the decision), then tells every other participant to commit, retrying
 * those that do not answer. Any refusal or silence: it aborts, and nothing changes.</li>
 * </ol>
 */
final class Proposer {

	private static final Log logger = LogFactory.getLog(Proposer.class);

	private static final JsonMapper JSON = JsonMapper.shared();

	private final ClusterState state;

	private final Participant self;

	private final PeerClient peers;

	private final Duration callTimeout;

	private final Duration commitPatience;

	Proposer(ClusterState state, Participant self, PeerClient peers, Duration callTimeout, Duration commitPatience) {
		this.state = state;
		this.self = self;
		this.peers = peers;
		this.callTimeout = callTimeout;
		this.commitPatience = commitPatience;
	}

	/** What became of a proposal. */
	sealed interface Result {

		/**
		 * Agreed and adopted here; the others were told (some perhaps not yet).
		 *
		 * @param ring the new ring
		 * @param unreached participants that did not confirm the commit in time (they
		 * learn it from the next call of any node, or by asking this one)
		 */
		record Committed(Ring ring, List<String> unreached) implements Result {
		}

		/**
		 * Not agreed; nothing changed.
		 *
		 * @param reason who refused and why
		 */
		record Refused(String reason) implements Result {
		}

	}

	/**
	 * Proposes {@code next} as the successor of {@code base}, this node's current ring.
	 * @param base the ring the change was computed from
	 * @param next its successor
	 */
	Mono<Result> propose(Ring base, Ring next) {
		Proposal proposal = new Proposal(UUID.randomUUID().toString(), base.epoch(), next, this.state.self(),
				System.currentTimeMillis());
		List<Node> participants = participants(base, next);
		return Mono.defer(() -> {
			this.self.driving().add(proposal.id());
			logger.info("Proposing " + proposal.describe() + " to " + participants);
			return prepareAll(proposal, participants, 0, new ArrayList<>());
		}).doFinally((signal) -> this.self.driving().remove(proposal.id()));
	}

	/**
	 * Who must agree: every node of either ring that is not removed in both and that
	 * neither ring's change declares dead, in the order of their ids.
	 */
	static List<Node> participants(Ring base, Ring next) {
		Map<String, Node> all = new LinkedHashMap<>();
		for (Node node : base.participants()) {
			all.put(node.id(), node);
		}
		for (Node node : next.participants()) {
			all.put(node.id(), node);
		}
		for (RingChange change : new RingChange[] { base.change(), next.change() }) {
			if (change != null) {
				all.keySet().removeIf(change::declaresDead);
			}
		}
		return all.values().stream().sorted(Comparator.comparing(Node::id)).toList();
	}

	private Mono<Result> prepareAll(Proposal proposal, List<Node> participants, int index, List<Node> prepared) {
		if (index == participants.size()) {
			return commitAll(proposal, participants);
		}
		Node participant = participants.get(index);
		return prepare(proposal, participant).flatMap((vote) -> {
			if (vote instanceof Vote.Refused refused) {
				return abortAll(proposal, prepared)
					.thenReturn(new Result.Refused(participant + " refused: " + refused.reason()));
			}
			prepared.add(participant);
			return prepareAll(proposal, participants, index + 1, prepared);
		});
	}

	private Mono<Vote> prepare(Proposal proposal, Node participant) {
		if (participant.id().equals(this.state.self().id())) {
			return this.self.prepare(proposal);
		}
		return this.peers
			.ringCall(participant, HttpMethod.POST, InternalApi.RING_PREPARE_PATH, proposal.toJson(), this.callTimeout)
			.map((reply) -> reply.ok() ? (Vote) new Vote.Accepted() : new Vote.Refused(
					(reply.status() == 409) ? reply.body() : "answered " + reply.status() + ": " + reply.body(), -1))
			.onErrorResume((error) -> Mono.just(new Vote.Refused("did not answer: " + error, -1)));
	}

	private Mono<Void> abortAll(Proposal proposal, List<Node> prepared) {
		logger.info("Aborting " + proposal.describe());
		String body = JSON.createObjectNode().put("id", proposal.id()).toString();
		return Flux.fromIterable(prepared)
			.flatMap((participant) -> participant.id().equals(this.state.self().id()) ? this.self.abort(proposal.id())
					: this.peers
						.ringCall(participant, HttpMethod.POST, InternalApi.RING_ABORT_PATH, body, this.callTimeout)
						.then()
						.onErrorResume((error) -> Mono.empty()))
			.then(this.self.learned(proposal.id(), Outcome.ABORTED));
	}

	private Mono<Result> commitAll(Proposal proposal, List<Node> participants) {
		ObjectNode body = JSON.createObjectNode().put("id", proposal.id());
		body.set("ring", RingJson.fullTree(proposal.next()));
		String json = body.toString();
		// The decision: this node adopts the ring (durably) before anyone else is told.
		return this.self.commit(proposal.id(), proposal.next())
			.then(Flux.fromIterable(participants)
				.filter((participant) -> !participant.id().equals(this.state.self().id()))
				.flatMap((participant) -> deliver(participant, json).thenReturn("")
					.onErrorResume((error) -> Mono.just(participant.id())))
				.filter((unreached) -> !unreached.isEmpty())
				.collectList())
			.map((unreached) -> {
				logger.info("Committed " + proposal.describe()
						+ (unreached.isEmpty() ? "" : "; not yet confirmed by " + unreached));
				return new Result.Committed(proposal.next(), unreached);
			});
	}

	/** Tells one participant to commit, retrying with backoff for a while. */
	private Mono<Void> deliver(Node participant, String json) {
		return this.peers.ringCall(participant, HttpMethod.POST, InternalApi.RING_COMMIT_PATH, json, this.callTimeout)
			.flatMap((reply) -> reply.ok() ? Mono.<Void>empty()
					: Mono.error(new IllegalStateException("answered " + reply.status() + ": " + reply.body())))
			.retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100)).maxBackoff(Duration.ofSeconds(2)))
			.timeout(this.commitPatience);
	}

}
