package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replica-aware routing against stand-in nodes ({@link FakeCluster}) that answer the ring
 * as the nodes write it: requests land on their key's replicas (the nodes' placement says
 * which), fall back to other nodes when the replicas are down, and follow a ring that
 * changed, read again after a 503, after the refresh interval, or once when answers name
 * a newer epoch, at a bounded rate.
 */
class ReplicaRoutingTest {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final byte[] VALUE = "v".getBytes(StandardCharsets.UTF_8);

	@Test
	void requestsForAKeyLandOnItsReplicas() {
		try (FakeCluster cluster = new FakeCluster(5, 5, 2);
				// One seed: the client learns the other nodes from the ring.
				QuorumKvClient client = QuorumKvClient.builder().seeds(List.of(cluster.url(0))).build()) {
			awaitEpoch(client, 1, () -> {
			});
			RoutingStats before = client.routingStats();
			Set<URI> coordinators = new HashSet<>();
			for (int i = 0; i < 200; i++) {
				String key = "user:" + i;
				client.put(key, VALUE).block(WAIT);
				client.get(key).block(WAIT);
				assertThat(cluster.reached(key)).as(key).hasSize(2).isSubsetOf(cluster.replicas(key));
				coordinators.addAll(cluster.reached(key));
			}
			RoutingStats after = client.routingStats();
			assertThat(after.toReplica() - before.toReplica()).isEqualTo(400);
			assertThat(after.toOtherNode()).isZero();
			assertThat(after.withoutRing()).isEqualTo(before.withoutRing());
			// Every node coordinates its share, the seed no more than the others.
			assertThat(coordinators).containsExactlyInAnyOrderElementsOf(cluster.urls());
		}
	}

	@Test
	void anyNodeRoutingSendsMostRequestsToANodeThatIsNoReplica() {
		try (FakeCluster cluster = new FakeCluster(5, 5, 2);
				QuorumKvClient client = QuorumKvClient.builder()
					.seeds(cluster.urls())
					.routing(QuorumKvClientBuilder.Routing.ANY_NODE)
					.build()) {
			int elsewhere = 0;
			for (int i = 0; i < 200; i++) {
				String key = "user:" + i;
				client.put(key, VALUE).block(WAIT);
				if (!cluster.replicas(key).containsAll(cluster.reached(key))) {
					elsewhere++;
				}
			}
			// 3 nodes of 5 are not replicas: each such request costs the node a hop.
			assertThat(elsewhere).isBetween(80, 160);
			assertThat(client.routingStats()).isEqualTo(new RoutingStats(0, 0, 200, 0));
			assertThat(cluster.ringReads()).isZero();
		}
	}

	@Test
	void whenTheReplicasAreDownAnotherNodeCoordinates() {
		try (FakeCluster cluster = new FakeCluster(4, 4, 2)) {
			String key = "fallback";
			List<URI> replicas = cluster.replicas(key);
			List<URI> others = new ArrayList<>(cluster.urls());
			others.removeAll(replicas);
			try (QuorumKvClient client = QuorumKvClient.builder().seeds(others).build()) {
				assertFallback(cluster, client, key, replicas);
			}
		}
	}

	private static void assertFallback(FakeCluster cluster, QuorumKvClient client, String key, List<URI> replicas) {
		awaitEpoch(client, 1, () -> {
		});
		for (URI replica : replicas) {
			cluster.stop(cluster.urls().indexOf(replica));
		}
		// Both replicas refuse the connection (never sent, so retried), then another
		// node takes the write.
		client.put(key, VALUE).block(WAIT);
		assertThat(cluster.reached(key)).hasSize(1).doesNotContainAnyElementsOf(replicas);
		RoutingStats first = client.routingStats();
		assertThat(first.toReplica()).isEqualTo(2);
		assertThat(first.toOtherNode()).isEqualTo(1);
		// The replicas are now marked down: the next request goes elsewhere at once.
		client.get(key).block(WAIT);
		RoutingStats second = client.routingStats();
		assertThat(second.toReplica()).isEqualTo(first.toReplica());
		assertThat(second.toOtherNode()).isEqualTo(2);
		assertThat(cluster.reached(key)).hasSize(2).doesNotContainAnyElementsOf(replicas);
	}

	@Test
	void aNodeAnswering503MakesTheClientReadTheRingAgainAtABoundedRate() {
		try (FakeCluster cluster = new FakeCluster(4, 3, 1);
				QuorumKvClient client = QuorumKvClient.builder()
					.seeds(List.of(cluster.url(1)))
					.retryPolicy(RetryPolicy.NONE)
					// Never by time here: only the 503 can make it read the ring again.
					.ringRefreshInterval(Duration.ofHours(1))
					.build()) {
			awaitEpoch(client, 1, () -> {
			});
			String key = keyOwnedBy(cluster, cluster.url(0));
			// Node 0 leaves, node 3 joins (epoch 2); node 0 answers 503 from now on.
			cluster.ring((ring) -> next(ring, List.of(new RingNode("node-0", cluster.url(0), NodeState.REMOVED),
					new RingNode("node-3", cluster.url(3), NodeState.NORMAL))));
			cluster.unavailable(0);
			long start = System.nanoTime();
			int readsBefore = cluster.ringReads();
			awaitEpoch(client, 2, () -> client.put(key, VALUE).onErrorComplete().block(WAIT));
			long seconds = Duration.ofNanos(System.nanoTime() - start).toSeconds();
			// At most one read a second, however many 503s came.
			assertThat(cluster.ringReads() - readsBefore).isLessThanOrEqualTo((int) seconds + 2);
			client.put(key, VALUE).block(WAIT);
			List<URI> reached = cluster.reached(key);
			assertThat(reached.get(reached.size() - 1)).isEqualTo(cluster.replicas(key).get(0))
				.isNotEqualTo(cluster.url(0));
		}
	}

	@Test
	void theRingIsReadAgainPeriodically() {
		try (FakeCluster cluster = new FakeCluster(4, 3, 1);
				QuorumKvClient client = QuorumKvClient.builder()
					.seeds(cluster.urls().subList(0, 3))
					.ringRefreshInterval(Duration.ofMillis(200))
					.build()) {
			awaitEpoch(client, 1, () -> {
			});
			// Node 3 joins (epoch 2), and nothing fails: only the period brings it.
			cluster.ring((ring) -> next(ring, List.of(new RingNode("node-3", cluster.url(3), NodeState.NORMAL))));
			awaitEpoch(client, 2, () -> client.get("probe").block(WAIT));
			Set<URI> coordinators = new HashSet<>();
			for (int i = 0; i < 100; i++) {
				String key = "after:" + i;
				client.put(key, VALUE).block(WAIT);
				assertThat(cluster.reached(key)).as(key).containsExactlyElementsOf(cluster.replicas(key));
				coordinators.addAll(cluster.reached(key));
			}
			// The node the new ring added, which no seed names, has its share.
			assertThat(coordinators).contains(cluster.url(3));
			assertThat(client.routingStats().toOtherNode()).isZero();
		}
	}

	@Test
	void anAnswerNamingANewerEpochMakesTheClientReadTheRingExactlyOnce() {
		try (FakeCluster cluster = new FakeCluster(4, 3, 1);
				QuorumKvClient client = QuorumKvClient.builder()
					.seeds(List.of(cluster.url(0)))
					.retryPolicy(RetryPolicy.NONE)
					// Never by time here: only the answers' epoch can make it read the
					// ring again.
					.ringRefreshInterval(Duration.ofHours(1))
					.build()) {
			cluster.announceEpoch();
			awaitEpoch(client, 1, () -> {
			});
			int readsBefore = cluster.ringReads();
			for (int i = 0; i < 10; i++) {
				client.put("same:" + i, VALUE).block(WAIT);
			}
			assertThat(cluster.ringReads()).as("answers naming the epoch held read nothing").isEqualTo(readsBefore);
			// Node 3 joins (epoch 2); the ring reads are held, so every answer below
			// names
			// epoch 2 while the client still routes by epoch 1.
			cluster.holdRingReads();
			cluster.ring((ring) -> next(ring, List.of(new RingNode("node-3", cluster.url(3), NodeState.NORMAL))));
			for (int i = 0; i < 30; i++) {
				client.put("burst:" + i, VALUE).block(WAIT);
			}
			assertThat(client.routingStats().ringEpoch()).isEqualTo(1);
			cluster.releaseRingReads();
			awaitEpoch(client, 2, () -> {
			});
			for (int i = 0; i < 30; i++) {
				client.put("after:" + i, VALUE).block(WAIT);
			}
			assertThat(cluster.ringReads() - readsBefore).as("ring reads for 60 answers naming epoch 2").isEqualTo(1);
		}
	}

	/** A key whose single replica is {@code node}. */
	private static String keyOwnedBy(FakeCluster cluster, URI node) {
		for (int i = 0;; i++) {
			String key = "key:" + i;
			if (cluster.replicas(key).equals(List.of(node))) {
				return key;
			}
		}
	}

	private static Ring next(Ring ring, List<RingNode> changed) {
		List<RingNode> nodes = new ArrayList<>(ring.nodes());
		for (RingNode node : changed) {
			nodes.removeIf((old) -> old.id().equals(node.id()));
			nodes.add(node);
		}
		return new Ring(ring.clusterId(), ring.epoch() + 1, ring.replicationFactor(), ring.strategy(),
				ring.virtualNodes(), nodes, null);
	}

	/**
	 * Waits until the client routes by the ring of {@code epoch}, running {@code nudge}
	 * between looks (up to 400 looks, 25 ms apart).
	 */
	private static void awaitEpoch(QuorumKvClient client, long epoch, Runnable nudge) {
		for (int i = 0; i < 400 && client.routingStats().ringEpoch() < epoch; i++) {
			nudge.run();
			try {
				Thread.sleep(25);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError(ex);
			}
		}
		assertThat(client.routingStats().ringEpoch()).as("the ring's epoch").isEqualTo(epoch);
	}

}
