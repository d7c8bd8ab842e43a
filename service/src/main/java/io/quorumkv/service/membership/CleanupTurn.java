package io.quorumkv.service.membership;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The turn of a member's automatic clean-up: the members of a change clean up one at a
 * time, in the order of their ids, each waiting until the one before it
 * ({@link #predecessor}) has none waiting and none running
 * ({@code GET /internal/v0/cleanup}), or does not answer.
 */
final class CleanupTurn {

	private static final Log logger = LogFactory.getLog(CleanupTurn.class);

	private final ClusterState state;

	private final PeerClient peers;

	private final Duration pollInterval;

	private final Duration callTimeout;

	/**
	 * @param pollInterval how often a clean-up waiting for its turn asks the member
	 * before it
	 */
	CleanupTurn(ClusterState state, PeerClient peers, Duration pollInterval, Duration callTimeout) {
		this.state = state;
		this.peers = peers;
		this.pollInterval = pollInterval;
		this.callTimeout = callTimeout;
	}

	/** Completes once {@code before} is not cleaning up, or does not answer. */
	Mono<Void> await(Ring ring, RingNode before) {
		return Mono.defer(() -> {
			long start = System.nanoTime();
			return Flux.interval(Duration.ZERO, this.pollInterval).onBackpressureDrop().concatMap((tick) -> {
				current(ring);
				return busy(before);
			}).takeUntil((busy) -> !busy).then(Mono.fromRunnable(() -> {
				long waited = (System.nanoTime() - start) / 1_000_000;
				if (waited >= this.pollInterval.toMillis()) {
					logger.info("Cleanup after epoch " + ring.epoch() + ": waited " + waited + " ms for node "
							+ before.id() + " to clean up first");
				}
			}));
		});
	}

	/**
	 * Whether {@code node} has a clean-up waiting or running; false when it does not say.
	 */
	private Mono<Boolean> busy(RingNode node) {
		return RingCalls.get(this.peers, node.node(), InternalApi.CLEANUP_PATH, this.callTimeout).map((reply) -> {
			if (!reply.ok()) {
				logger.info("Cleanup: node " + node.id() + " answered " + reply.status()
						+ " about its own; not waiting for it");
				return false;
			}
			JsonNode status = JsonMapper.shared().readTree(reply.body());
			return status.path("running").asBoolean(false) || status.path("waiting").asBoolean(false);
		}).onErrorResume((error) -> {
			logger.info("Cleanup: node " + node.id() + " did not say whether it cleans up (" + error.getMessage()
					+ "); not waiting for it");
			return Mono.just(false);
		});
	}

	/** Fails when a newer ring replaced {@code ring}. */
	void current(Ring ring) {
		long epoch = this.state.epoch();
		if (epoch != ring.epoch()) {
			throw new IllegalStateException(
					"epoch " + epoch + " replaced " + ring.epoch() + " before this node's turn came");
		}
	}

	/**
	 * The member whose automatic clean-up comes before this node's: the one before it
	 * among the ring's members ordered by id; none for the first, or a node that is not a
	 * member.
	 */
	static Optional<RingNode> predecessor(Ring ring, String self) {
		List<RingNode> members = ring.nodes()
			.stream()
			.filter((node) -> ring.isMember(node.id()))
			.sorted(Comparator.comparing(RingNode::id))
			.toList();
		for (int i = 1; i < members.size(); i++) {
			if (members.get(i).id().equals(self)) {
				return Optional.of(members.get(i - 1));
			}
		}
		return Optional.empty();
	}

}
