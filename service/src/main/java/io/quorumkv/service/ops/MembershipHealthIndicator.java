package io.quorumkv.service.ops;

import java.util.Optional;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.membership.MembershipProperties;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * {@code membership} in {@code /actuator/health} and in its readiness group: this node's
 * state in the ring it serves under. {@code OUT_OF_SERVICE} (503) once the node is
 * leaving (a decommission has started) or removed, so that a load balancer or a
 * Kubernetes Service stops sending it requests while it still coordinates them: it serves
 * until its decommission ends, and the clients have moved on by then. A node waiting to
 * be joined, joining or a member is {@code UP}.
 */
@Component
class MembershipHealthIndicator implements HealthIndicator {

	private final ClusterState cluster;

	private final boolean autoJoin;

	MembershipHealthIndicator(ClusterState cluster, MembershipProperties membership) {
		this.cluster = cluster;
		this.autoJoin = membership.autoJoin();
	}

	@Override
	public Health health() {
		Optional<Ring> ring = this.cluster.ring();
		if (ring.isEmpty()) {
			// With auto-join the node asks to be joined itself: not ready until it is.
			return (this.autoJoin ? Health.outOfService() : Health.up()).withDetail("state", "waiting to be joined")
				.build();
		}
		NodeState state = ring.get().node(this.cluster.self().id()).map(RingNode::state).orElse(NodeState.REMOVED);
		Health.Builder health = (state == NodeState.LEAVING || state == NodeState.REMOVED) ? Health.outOfService()
				: Health.up();
		return health.withDetail("state", state.label()).withDetail("epoch", ring.get().epoch()).build();
	}

}
