package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.cluster.RingLayout;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The client places keys exactly as the nodes do: its replicas, computed from the public
 * ring's JSON as the nodes write it, against the nodes' own placement
 * ({@code RingLayout}) for thousands of keys over rings of both strategies, many sizes,
 * replication factors, virtual-node counts and ids, and during joins and decommissions.
 * The seed of each ring is printed by the assertion that fails, to replay it.
 */
class PlacementAgreementTest {

	@Test
	void theReplicasAreTheNodesReplicas() {
		int rings = 0;
		for (long seed = 1; seed <= 120; seed++) {
			Random random = new Random(seed);
			Ring ring = randomRing(random);
			assertAgreement(ring, random, 2_000, "seed " + seed);
			rings++;
			// The same cluster during a join and during a decommission: the client routes
			// by the old owners, as the nodes read.
			Node newcomer = Node.of("node-new-" + seed, "http://10.9.9.9:" + (9000 + seed));
			Ring joining = ring.join(newcomer, "change-" + seed, ring.nodes().get(0).id());
			assertAgreement(joining, random, 500, "seed " + seed + " joining");
			assertAgreement(joining.advance(), random, 200, "seed " + seed + " joining, handover");
			if (ring.nodes().size() > ring.replicationFactor()) {
				Ring leaving = ring.decommission(ring.nodes().get(random.nextInt(ring.nodes().size())).id(),
						"leave-" + seed, ring.nodes().get(0).id());
				assertAgreement(leaving, random, 500, "seed " + seed + " leaving");
				assertAgreement(leaving.advance().advance(), random, 200, "seed " + seed + " left");
			}
		}
		assertThat(rings).isEqualTo(120);
	}

	@Test
	void aRingTheClientCannotUseIsRefused() {
		Ring ring = Ring.seed("c1", List.of(Node.of("http://127.0.0.1:1"), Node.of("http://127.0.0.1:2")), 2,
				PlacementStrategy.RENDEZVOUS, 128);
		String json = RingJson.writePublic(ring);
		assertThat(RingView.parse(json, "http").replicas("k".getBytes(StandardCharsets.UTF_8))).hasSize(2);
		// Seeds over TLS never take an http:// node from the ring.
		assertThatIllegalArgumentException().isThrownBy(() -> RingView.parse(json, "https"))
			.withMessageContaining("http://127.0.0.1:1");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RingView.parse(json.replace("rendezvous", "jump"), "http"))
			.withMessageContaining("jump");
		assertThatIllegalArgumentException().isThrownBy(() -> RingView.parse("{\"epoch\":1}", "http"));
		assertThatIllegalArgumentException().isThrownBy(() -> RingView.parse("[".repeat(100), "http"))
			.withMessageContaining("nesting depth");
	}

	private static void assertAgreement(Ring ring, Random random, int keys, String replay) {
		RingLayout layout = RingLayout.of(ring);
		RingView view = RingView.parse(RingJson.writePublic(ring), "http");
		assertThat(view.epoch()).isEqualTo(ring.epoch());
		for (int i = 0; i < keys; i++) {
			byte[] key = randomKey(random);
			List<URI> expected = layout.oldOwners(key).stream().map(Node::url).toList();
			assertThat(view.replicas(key)).as(() -> replay + ", " + ring.describe() + ", key " + hex(key))
				.containsExactlyElementsOf(expected);
		}
	}

	static Ring randomRing(Random random) {
		int size = 1 + random.nextInt(9);
		boolean urlIds = random.nextBoolean();
		List<Node> nodes = new ArrayList<>();
		for (int i = 0; i < size; i++) {
			String url = "http://10.0." + random.nextInt(256) + "." + i + ":" + (1024 + random.nextInt(60_000));
			nodes.add(urlIds ? Node.of(url) : Node.of("node-" + Long.toHexString(random.nextLong()), url));
		}
		PlacementStrategy strategy = random.nextBoolean() ? PlacementStrategy.RENDEZVOUS
				: PlacementStrategy.CONSISTENT_HASH;
		int[] virtualNodes = { 1, 2, 7, 64, 128, 256 };
		return Ring.seed("cluster-" + random.nextInt(100), nodes, 1 + random.nextInt(size), strategy,
				virtualNodes[random.nextInt(virtualNodes.length)]);
	}

	/** Keys of every length class of XXH3: 1-3, 4-8, 9-16, 17-128, 129-240 and longer. */
	private static byte[] randomKey(Random random) {
		int[] bounds = { 3, 8, 16, 128, 240, 1024 };
		int bound = bounds[random.nextInt(bounds.length)];
		byte[] key = new byte[1 + random.nextInt(bound)];
		random.nextBytes(key);
		return key;
	}

	private static String hex(byte[] key) {
		StringBuilder out = new StringBuilder();
		for (byte b : key) {
			out.append(String.format("%02x", b));
		}
		return out.toString();
	}

}
