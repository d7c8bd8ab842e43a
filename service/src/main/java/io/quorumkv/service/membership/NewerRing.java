package io.quorumkv.service.membership;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;

import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.metadata.MetadataGroup;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A member that serves a newer ring than a forced reconfiguration would start from: the
 * members of the ring a survivor can reach are asked who they are
 * ({@code GET /internal/v0/ring/identity}, at most {@link #AT_ONCE} at a time, each for
 * the membership call timeout), and the one serving the highest epoch of the same cluster
 * above the survivor's is named. A member that does not answer, answers otherwise than
 * 200 or is of another cluster is left out: only what a survivor can reach counts.
 *
 * @param node the member
 * @param epoch the epoch it serves
 * @param voter whether it is a voter of the metadata group under the survivor's ring (a
 * force can run on it)
 */
record NewerRing(RingNode node, long epoch, boolean voter) {

	/** The most members asked at once. */
	static final int AT_ONCE = 8;

	/**
	 * The member of {@code ring} serving the highest epoch above {@code epoch}, the nodes
	 * whose ids are in {@code skip} (this node, the lost ones), the removed nodes and the
	 * nodes fenced by the ring's generation left out; empty when none does.
	 */
	static Mono<Optional<NewerRing>> find(PeerClient peers, Ring ring, long epoch, Set<String> skip, Duration timeout) {
		Set<String> voters = Set.copyOf(MetadataGroup.voters(ring).stream().map(RingNode::id).toList());
		return Flux.fromIterable(ring.nodes())
			.filter((node) -> !skip.contains(node.id()) && node.state() != NodeState.REMOVED
					&& !ring.generation().fences(node))
			.flatMap((node) -> RingCalls.get(peers, node.node(), InternalApi.RING_IDENTITY_PATH, timeout)
				.flatMap((reply) -> served(reply, ring.clusterId()))
				.filter((served) -> served > epoch)
				.map((served) -> new NewerRing(node, served, voters.contains(node.id())))
				.onErrorResume((error) -> Mono.empty()), AT_ONCE)
			.reduce((one, other) -> (other.epoch() > one.epoch()) ? other : one)
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty());
	}

	/** The epoch an identity answer gives, when it is of {@code clusterId}. */
	private static Mono<Long> served(RingCalls.Reply reply, String clusterId) {
		if (reply.status() != 200) {
			return Mono.empty();
		}
		JsonNode identity = JsonMapper.shared().readTree(reply.body());
		JsonNode cluster = identity.get("clusterId");
		JsonNode served = identity.get("epoch");
		if (cluster == null || !cluster.isString() || !clusterId.equals(cluster.asString()) || served == null
				|| !served.isIntegralNumber()) {
			return Mono.empty();
		}
		return Mono.just(served.asLong());
	}

}
