package io.quorumkv.service.membership;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.metadata.MetadataGroup;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * The operator's view of membership ({@code qkv status}): this node, the metadata group,
 * its clean-up, the ring, and during a change's streaming every target's transfers, asked
 * of all targets at once and waited for at most {@link #PEER_WAIT} each (capped by the
 * membership call timeout), so that a target cut off or paused shows as an error line
 * while the view still answers within about that time: an operator looks at it exactly
 * when something is wrong.
 */
final class MembershipStatus {

	private final ClusterState state;

	private final MetadataGroup metadata;

	private final PeerClient peers;

	private final Transfers transfers;

	private final Cleanup cleanup;

	/** How long the view waits for a target's transfers. */
	static final Duration PEER_WAIT = Duration.ofSeconds(2);

	private final Duration callTimeout;

	MembershipStatus(ClusterState state, MetadataGroup metadata, PeerClient peers, Transfers transfers, Cleanup cleanup,
			Duration callTimeout) {
		this.state = state;
		this.metadata = metadata;
		this.peers = peers;
		this.transfers = transfers;
		this.cleanup = cleanup;
		this.callTimeout = (callTimeout.compareTo(PEER_WAIT) < 0) ? callTimeout : PEER_WAIT;
	}

	/**
	 * The ring and the change under way with the progress of every target's transfers:
	 * streams done, keys and bytes received, rate and estimated time left.
	 */
	Mono<Map<String, @Nullable Object>> status() {
		return Mono.defer(() -> {
			Map<String, @Nullable Object> status = new LinkedHashMap<>();
			RingLayout layout = this.state.layout();
			status.put("node", this.state.self().base());
			status.put("metadata", this.metadata.view());
			status.put("cleanup", this.cleanup.status());
			if (layout == null) {
				status.put("ring", null);
				return Mono.just(status);
			}
			Ring ring = layout.ring();
			status.put("ring", RingJson.map(ring));
			RingChange change = ring.change();
			if (change == null || change.phase() != RingChange.Phase.STREAMING) {
				status.put("transfers", List.of());
				return Mono.just(status);
			}
			return Flux.fromIterable(new TransferPlan(layout).targets())
				.flatMapSequential(this::transfersOf)
				.collectList()
				.map((targets) -> {
					status.put("transfers", targets);
					return status;
				});
		});
	}

	private Mono<Map<String, Object>> transfersOf(Node target) {
		if (target.id().equals(this.state.self().id())) {
			return Mono.just(this.transfers.status());
		}
		return RingCalls.get(this.peers, target, InternalApi.TRANSFERS_PATH, this.callTimeout).map((reply) -> {
			@SuppressWarnings("unchecked")
			Map<String, Object> map = reply.ok() ? JsonMapper.shared().readValue(reply.body(), Map.class)
					: Map.of("node", target.id(), "error", reply.status() + ": " + reply.body().strip());
			return map;
		})
			.onErrorResume(
					(error) -> Mono.just(Map.of("node", target.id(), "error", String.valueOf(error.getMessage()))));
	}

}
