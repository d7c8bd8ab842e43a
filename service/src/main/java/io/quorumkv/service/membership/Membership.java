package io.quorumkv.service.membership;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.metadata.MetadataGroup;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The operator's membership changes ({@code scripts/qkv join|decommission|remove|replace|
 * status|cleanup}, through the {@code quorumkv} Actuator endpoint): each checks what it
 * can, computes the next ring from the metadata log's ring and proposes it to the log
 * ({@link MetadataGroup#propose}), where it is applied only if the ring is still at the
 * epoch it was computed from; the group's leader then carries the change to its end
 * ({@link ChangeDriver}). A change asked against an epoch the ring has left, or while
 * another is under way, is refused.
 */
public final class Membership {

	private static final Log logger = LogFactory.getLog(Membership.class);

	private final ClusterState state;

	private final MetadataGroup metadata;

	private final PeerClient peers;

	private final Transfers transfers;

	private final Cleanup cleanup;

	private final Duration callTimeout;

	private final MembershipStatus statusView;

	Membership(ClusterState state, MetadataGroup metadata, PeerClient peers, Transfers transfers, Cleanup cleanup,
			Duration callTimeout) {
		this.state = state;
		this.metadata = metadata;
		this.peers = peers;
		this.transfers = transfers;
		this.cleanup = cleanup;
		this.callTimeout = callTimeout;
		this.statusView = new MembershipStatus(state, metadata, peers, transfers, cleanup, callTimeout);
	}

	/**
	 * The answer to an operator: an HTTP status and what to show.
	 *
	 * @param status 200 when done, 400 for a request that can never succeed, 409 when
	 * refused in the cluster's current state
	 * @param body what happened
	 */
	public record Answer(int status, Map<String, @Nullable Object> body) {

		static Answer refused(int status, String reason) {
			Map<String, @Nullable Object> body = new LinkedHashMap<>();
			body.put("refused", reason);
			return new Answer(status, body);
		}

	}

	/**
	 * Adds the node at {@code url} (started with the seed list, waiting to be joined).
	 */
	public Mono<Answer> join(String url, @Nullable Long epoch) {
		return change("join " + url, epoch, (ring) -> identity(url).map((identity) -> {
			String cluster = identity.path("clusterId").isNull() ? null : identity.path("clusterId").asString(null);
			if (cluster != null && !cluster.equals(ring.clusterId())) {
				String reason = url + " belongs to cluster " + cluster + " (epoch " + identity.path("epoch").asLong()
						+ "), not to " + ring.clusterId() + ": a node of another cluster cannot join; wipe its data "
						+ "folder to make it a new node";
				logger.warn("Refused to join " + url + ": " + reason);
				throw new ChangeRefused(409, reason);
			}
			Node newcomer = Node.of(identity.required("id").asString(), url);
			return ring.join(newcomer, UUID.randomUUID().toString(), this.state.self().id());
		}));
	}

	/** Takes the live node at {@code url} out: it streams its keys away, then leaves. */
	public Mono<Answer> decommission(String url, @Nullable Long epoch) {
		return change("decommission " + url, epoch, (ring) -> Mono.fromCallable(
				() -> ring.decommission(member(ring, url).id(), UUID.randomUUID().toString(), this.state.self().id())));
	}

	/** Takes the dead node at {@code url} out: the survivors re-create its copies. */
	public Mono<Answer> remove(String url, @Nullable Long epoch) {
		return change("remove " + url, epoch, (ring) -> {
			RingNode dead = member(ring, url);
			return requireDead(dead).then(Mono
				.fromCallable(() -> ring.remove(dead.id(), UUID.randomUUID().toString(), this.state.self().id())));
		});
	}

	/**
	 * A new node at {@code newUrl} takes the place of the dead node at {@code deadUrl}.
	 */
	public Mono<Answer> replace(String deadUrl, String newUrl, @Nullable Long epoch) {
		return change("replace " + deadUrl + " by " + newUrl, epoch, (ring) -> {
			RingNode dead = member(ring, deadUrl);
			return requireDead(dead).then(identity(newUrl)).map((identity) -> {
				if (!identity.path("clusterId").isNull()) {
					throw new ChangeRefused(409, newUrl + " already has a ring (cluster "
							+ identity.path("clusterId").asString() + "): a replacement must be a new, empty node");
				}
				return ring.replace(dead.id(), URI.create(newUrl), UUID.randomUUID().toString(),
						this.state.self().id());
			});
		});
	}

	/**
	 * The log's ring, read through its leader. Right after a cluster's first start the
	 * seeds' ring is not in the log yet (its first entry is being committed): the read is
	 * tried again for up to {@link #FIRST_RING_WAIT} before the change is refused.
	 */
	private Mono<java.util.Optional<Ring>> ringOfTheLog() {
		return this.metadata.read()
			.flatMap((logged) -> logged.isPresent() ? Mono.just(logged) : Mono.error(new NoRingYet()))
			.retryWhen(reactor.util.retry.Retry.fixedDelay(FIRST_RING_WAIT.toMillis() / 250, Duration.ofMillis(250))
				.filter(NoRingYet.class::isInstance))
			.onErrorResume((error) -> error instanceof NoRingYet || (error.getCause() instanceof NoRingYet),
					(error) -> Mono.just(java.util.Optional.empty()));
	}

	/** How long a change waits for the log's first ring before it is refused. */
	private static final Duration FIRST_RING_WAIT = Duration.ofSeconds(10);

	/** The log holds no ring yet. */
	private static final class NoRingYet extends RuntimeException {

		NoRingYet() {
			super("the metadata log holds no ring yet", null, false, false);
		}

	}

	private Mono<Answer> change(String what, @Nullable Long epoch, Function<Ring, Mono<Ring>> next) {
		if (this.state.ring().isEmpty()) {
			return Mono.just(Answer.refused(409, "this node has no ring: ask a member of the cluster"));
		}
		// The change is computed from the log's ring, read through its leader: the
		// newest,
		// even when this node has not applied the last entry yet.
		return ringOfTheLog().flatMap((logged) -> {
			Ring ring = logged.orElse(null);
			if (ring == null) {
				return Mono.just(Answer.refused(503, "the metadata log holds no ring yet: try again in a moment"));
			}
			if (epoch != null && epoch != ring.epoch()) {
				return Mono.just(Answer.refused(409, "stale: the change was asked against epoch " + epoch
						+ ", the ring is at epoch " + ring.epoch() + " (see scripts/qkv ring)"));
			}
			if (ring.node(this.state.self().id()).map(RingNode::state).orElse(null) != NodeState.NORMAL) {
				return Mono.just(Answer.refused(409, "ask a normal member of the cluster to start changes"));
			}
			return next.apply(ring)
				.flatMap((proposed) -> this.metadata.propose(ring.epoch(), proposed).map((proposal) -> {
					if (!proposal.applied()) {
						return Answer.refused(409, "refused by the metadata log: " + proposal.reason()
								+ " (the ring is at epoch " + proposal.epoch() + ")");
					}
					RingChange change = proposed.change();
					Map<String, @Nullable Object> body = new LinkedHashMap<>();
					body.put("change", (change != null) ? change.id() : null);
					body.put("kind", (change != null) ? change.kind().label() : null);
					body.put("node", (change != null) ? change.nodeId() : null);
					body.put("epoch", proposal.epoch());
					body.put("coordinator", this.state.self().base());
					logger.info("Operator's " + what + " applied at epoch " + proposal.epoch());
					return new Answer(200, body);
				}))
				.onErrorResume(ChangeRefused.class,
						(refused) -> Mono.just(Answer.refused(refused.status, refused.getMessage())))
				.onErrorResume(IllegalArgumentException.class,
						(bad) -> Mono.just(Answer.refused(400, bad.getMessage())))
				.onErrorResume(IllegalStateException.class, (bad) -> Mono
					.just(Answer.refused(409, bad.getMessage() + " (the ring is at epoch " + ring.epoch() + ")")));
		})
			.onErrorResume((error) -> !(error instanceof ChangeRefused), (error) -> Mono.just(Answer.refused(503,
					"the metadata log did not answer (is a majority of its voters up?): " + error.getMessage())));
	}

	private static RingNode member(Ring ring, String url) {
		return ring.nodeAt(URI.create(url))
			.orElseThrow(() -> new IllegalArgumentException("no node of the ring is at " + url));
	}

	/** Who the node at {@code url} is and of which cluster. */
	private Mono<JsonNode> identity(String url) {
		Node probe = Node.of(url);
		return RingCalls.get(this.peers, probe, InternalApi.RING_IDENTITY_PATH, this.callTimeout)
			.onErrorMap((error) -> new ChangeRefused(409, url + " does not answer: " + error.getMessage()))
			.map((reply) -> {
				if (!reply.ok()) {
					throw new ChangeRefused(409, url + " answered " + reply.status() + ": " + reply.body().strip());
				}
				return JsonMapper.shared().readTree(reply.body());
			});
	}

	/** Removing or replacing a node that still answers would be wrong: refused. */
	Mono<Void> requireDead(RingNode node) {
		return RingCalls.get(this.peers, node.node(), InternalApi.RING_IDENTITY_PATH, this.callTimeout)
			.map((reply) -> true)
			.onErrorResume((error) -> Mono.just(false))
			.flatMap(
					(alive) -> alive
							? Mono.error(
									new ChangeRefused(409,
											node.url() + " (node " + node.id()
													+ ") still answers: decommission a live node instead"))
							: Mono.empty());
	}

	/**
	 * The ring and the change under way with the progress of every target's transfers
	 * ({@link MembershipStatus}).
	 */
	public Mono<Map<String, @Nullable Object>> status() {
		return this.statusView.status();
	}

	/** Removes from this node's storage the keys it no longer owns. */
	public Mono<Answer> cleanup() {
		return this.cleanup.run().map((removed) -> {
			Map<String, @Nullable Object> body = new LinkedHashMap<>();
			body.put("node", this.state.self().base());
			body.put("removed", removed);
			return new Answer(200, body);
		}).onErrorResume(IllegalStateException.class, (busy) -> Mono.just(Answer.refused(409, busy.getMessage())));
	}

	/** This node's clean-up: one waiting for its turn, one running, the last one. */
	public Map<String, @Nullable Object> cleanupStatus() {
		return this.cleanup.status();
	}

	/** This node's transfers in the change under way (for the coordinator and status). */
	public Map<String, Object> transfers() {
		return this.transfers.status();
	}

	/** A change refused before it was proposed. */
	static final class ChangeRefused extends RuntimeException {

		final int status;

		ChangeRefused(int status, String message) {
			super(message, null, false, false);
			this.status = status;
		}

	}

}
