package io.quorumkv.service.membership;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.metadata.MetadataGroup;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The operator's way out when a majority of the metadata group's voters is lost for good
 * ({@code scripts/qkv force-reconfigure DEAD-URL...}, through the {@code quorumkv}
 * Actuator endpoint, on a surviving voter): checks that every node named lost is in the
 * ring and does not answer, then has this node form the next generation of the group
 * ({@link MetadataGroup#forceNewGeneration}). Answers 200 with the new generation, its
 * voters and the fenced nodes; 409 with the reason when refused.
 */
public final class ForcedReconfiguration {

	private static final Log logger = LogFactory.getLog(ForcedReconfiguration.class);

	private final ClusterState state;

	private final MetadataGroup metadata;

	private final Membership membership;

	ForcedReconfiguration(ClusterState state, MetadataGroup metadata, Membership membership) {
		this.state = state;
		this.metadata = metadata;
		this.membership = membership;
	}

	/**
	 * Forms the next generation of the group, the voters at {@code lostUrls} left out.
	 */
	public Mono<Membership.Answer> run(List<String> lostUrls) {
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
		logger.warn("Operator asked for a forced reconfiguration of the metadata group without "
				+ lost.stream().map(RingNode::id).toList());
		return Flux.fromIterable(lost)
			.concatMap(this.membership::requireDead)
			.then(this.metadata.forceNewGeneration(lost.stream().map(RingNode::id).toList()))
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

}
