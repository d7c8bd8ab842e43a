package io.quorumkv.service.membership;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node started with {@code auto-join} and the seeds' URLs becomes a member with no
 * operator step (a new pod of a StatefulSet that scales up): it asks the seeds to join
 * it, the change runs as an operator's join does, and its readiness is down until it is a
 * member; every key written before reads back through it.
 */
class AutoJoinTest {

	private static final int KEYS = 100;

	@TempDir
	Path root;

	@Test
	void aNodeStartedWithAutoJoinBecomesAMemberWithNoOperatorStep() {
		try (TestCluster cluster = new TestCluster(this.root, 4,
				Map.of("quorumkv.cluster.replication-factor", "2", "management.endpoints.web.exposure.include",
						"health,quorumkv", "quorumkv.cluster.membership.poll-interval", "200ms"))) {
			String seeds = cluster.url(0) + "," + cluster.url(1) + "," + cluster.url(2);
			for (int node = 0; node < 3; node++) {
				cluster.start(node, Map.of("quorumkv.cluster.nodes", seeds));
			}
			cluster.putKeys(KEYS, 0, 1, 2);
			cluster.start(3, Map.of("quorumkv.cluster.nodes", seeds, "quorumkv.cluster.membership.auto-join", "true"));
			int ready = cluster.readiness(3);
			if (cluster.bean(3, ClusterState.class).ring().isEmpty()) {
				assertThat(ready).as("readiness while waiting to be joined").isEqualTo(503);
			}
			String id = cluster.bean(3, ClusterState.class).self().id();
			eventually(Duration.ofSeconds(60), () -> {
				for (int node = 0; node < 4; node++) {
					Optional<Ring> ring = cluster.bean(node, ClusterState.class).ring();
					assertThat(ring).as("node %d's ring", node).isPresent();
					assertThat(ring.get().change()).as("node %d: the change under way", node).isNull();
					assertThat(ring.get().node(id).map(RingNode::state)).as("node %d: the newcomer", node)
						.hasValue(NodeState.NORMAL);
				}
			});
			assertThat(cluster.readiness(3)).isEqualTo(200);
			cluster.expectKeys(KEYS, 3);
		}
	}

}
