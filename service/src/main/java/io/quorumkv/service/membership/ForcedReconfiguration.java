package io.quorumkv.service.membership;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.metadata.MetadataGroup;
import io.quorumkv.service.peer.PeerClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The operator's way out when a majority of the metadata group's voters is lost for good
 * ({@code scripts/qkv force-reconfigure DEAD-URL...}, through the {@code quorumkv}
 * Actuator endpoint, on a surviving voter): checks that every node named lost is in the
 * ring and does not answer, and that no other member this node reaches serves a newer
 * ring ({@link NewerRing}), then has this node form the next generation of the group
 * ({@link MetadataGroup#forceNewGeneration}). Answers 200 with the new generation, its
 * voters and the fenced nodes; 409 with the reason when refused.
 *
 * <p>
 * A newer ring elsewhere refuses the force (the changes after this node's epoch would be
 * lost) unless the operator allows an older ring explicitly; the refusal names the member
 * and its epoch, and starts ring exchange from it, so that this node holds that ring when
 * the operator asks again (docs/membership.md, "Losing a majority of the voters").
 */
public final class ForcedReconfiguration {

	private static final Log logger = LogFactory.getLog(ForcedReconfiguration.class);

	private final ClusterState state;

	private final Steps steps;

	private final PeerClient peers;

	private final RingSync sync;

	private final Duration callTimeout;

	ForcedReconfiguration(ClusterState state, Steps steps, PeerClient peers, RingSync sync, Duration callTimeout) {
		this.state = state;
		this.steps = steps;
		this.peers = peers;
		this.sync = sync;
		this.callTimeout = callTimeout;
	}

	/**
	 * Forms the next generation of the group, the voters at {@code lostUrls} left out.
	 * @param lostUrls the URLs of the voters lost for good
	 * @param allowOlderRing whether to force even when another member this node reaches
	 * serves a newer ring (its changes after this node's epoch are then lost)
	 */
	public Mono<Membership.Answer> run(List<String> lostUrls, boolean allowOlderRing) {
		Ring ring = this.state.ring().orElse(null);
		if (ring == null) {
			return Mono.just(Membership.Answer.refused(409, "this node has no ring: ask a surviving voter"));
		}
		List<RingNode> lost = new ArrayList<>();
		for (String url : lostUrls) {
			RingNode node = ring.nodeAt(URI.create(url.strip())).orElse(null);
			if (node == null) {
				return Mono.just(Membership.Answer.refused(400, "no node of the ring is at " + url));
			}
			lost.add(node);
		}
		if (lost.isEmpty()) {
			return Mono.just(Membership.Answer.refused(400, "name the voters lost for good (their URLs)"));
		}
		List<String> lostIds = lost.stream().map(RingNode::id).toList();
		logger.warn("Operator asked for a forced reconfiguration of the metadata group without " + lostIds
				+ (allowOlderRing ? ", allowing an older ring than another member's" : ""));
		return Flux.fromIterable(lost)
			.concatMap(this.steps::requireDead)
			.then(Mono.defer(() -> this.steps.forceBase(lostIds)))
			.flatMap((base) -> allowOlderRing ? Mono.<Void>empty() : requireNewest(base, lostIds))
			.then(Mono.defer(() -> this.steps.forceNewGeneration(lostIds)))
			.map((forced) -> {
				Map<String, @Nullable Object> body = new LinkedHashMap<>();
				body.put("node", this.state.self().base());
				body.put("generation", forced.generation());
				body.put("epoch", forced.epoch());
				body.put("voters", forced.voters());
				body.put("fenced", forced.fenced());
				return new Membership.Answer(200, body);
			})
			.onErrorResume(Membership.ChangeRefused.class,
					(refused) -> Mono.just(Membership.Answer.refused(refused.status, refused.getMessage())))
			.onErrorResume(IllegalStateException.class,
					(refused) -> Mono.just(Membership.Answer.refused(409, refused.getMessage())));
	}

	/**
	 * Refuses (409) when a member this node reaches serves a newer ring than
	 * {@code base}, the one the force would start from, and has this node fetch that ring
	 * (ring exchange).
	 */
	private Mono<Void> requireNewest(Ring base, List<String> lostIds) {
		long mine = base.epoch();
		Set<String> skip = new HashSet<>(lostIds);
		skip.add(this.state.self().id());
		return NewerRing.find(this.peers, base, mine, skip, this.callTimeout).flatMap((newer) -> {
			if (newer.isEmpty()) {
				return Mono.empty();
			}
			NewerRing found = newer.get();
			this.sync.catchUp(found.node().node(), found.epoch()).subscribe(null, (error) -> {
			});
			String reason = "node " + found.node().id() + " (" + found.node().url() + ") serves ring epoch "
					+ found.epoch() + ", newer than this node's " + mine + (found.voter() ? " (it is a voter)" : "")
					+ ": this node is fetching that ring (ring exchange); ask again once `qkv ring` here shows epoch "
					+ found.epoch() + (found.voter() ? ", or force on that node" : "")
					+ ", or pass allowOlderRing (qkv force-reconfigure --allow-older-ring) to force from epoch " + mine
					+ " and lose the changes of epochs " + (mine + 1) + " to " + found.epoch();
			logger.warn("Forced reconfiguration refused: " + reason);
			return Mono.error(new Membership.ChangeRefused(409, reason));
		});
	}

	/**
	 * What a forced reconfiguration does through the rest of the node: the membership
	 * checks and the metadata group ({@link MembershipConfiguration} wires them).
	 */
	interface Steps {

		/** Fails with a {@link Membership.ChangeRefused} when {@code node} answers. */
		Mono<Void> requireDead(RingNode node);

		/**
		 * The ring the force would start from, or an {@link IllegalStateException} why it
		 * is refused ({@link MetadataGroup#forceBase}).
		 */
		Mono<Ring> forceBase(List<String> lostIds);

		/** {@link MetadataGroup#forceNewGeneration}. */
		Mono<MetadataGroup.Forced> forceNewGeneration(List<String> lostIds);

	}

}
