package io.quorumkv.client;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replica-aware routing against three real nodes with replication factor 1, where the
 * node a request reaches either holds the key or must call the node that does. The nodes'
 * own meter of calls to peers ({@code quorumkv.replica.requests}, a get or an upsert sent
 * to another node) shows which: with replica-aware routing no request needs one, which
 * holds only if the client's placement is the nodes'; with any-node routing about two in
 * three do. Each routing's mean time per request is printed, for {@code docs/client.md}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReplicaRoutingNodesTest {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final int KEYS = 60;

	private static final int ROUNDS = 2;

	private static final HttpClient SCRAPER = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private TestNodes nodes;

	@BeforeAll
	void startCluster() throws IOException {
		this.nodes = TestNodes.start(3, Map.of("quorumkv.cluster.replication-factor", "1"));
	}

	@AfterAll
	void stopCluster() throws IOException {
		if (this.nodes != null) {
			this.nodes.close();
		}
	}

	@Test
	void requestsReachTheNodeThatHoldsTheKey() throws Exception {
		try (QuorumKvClient aware = QuorumKvClient.builder().seeds(this.nodes.urls().subList(0, 1)).build();
				QuorumKvClient anyNode = QuorumKvClient.builder()
					.seeds(this.nodes.urls())
					.routing(QuorumKvClientBuilder.Routing.ANY_NODE)
					.build()) {
			for (int i = 0; i < 400 && aware.routingStats().ringEpoch() == 0; i++) {
				Thread.sleep(25);
			}
			assertThat(aware.routingStats().ringEpoch()).isPositive();
			// Warm both (connections, the nodes' code) on other keys before counting.
			run(aware, "warm-a/");
			run(anyNode, "warm-b/");

			// Alternated rounds, each routing first in turn, so that neither gains from
			// running later (a warmer JIT, a quieter machine).
			long[] nanos = new long[2];
			long[] calls = new long[2];
			for (int round = 0; round < ROUNDS; round++) {
				for (int turn = 0; turn < 2; turn++) {
					int routing = (round + turn) % 2;
					long before = peerCalls();
					nanos[routing] += run((routing == 0) ? aware : anyNode, "r" + round + "-" + routing + "/");
					calls[routing] += peerCalls() - before;
				}
			}
			assertThat(calls[0]).as("calls to peers with replica-aware routing").isZero();
			assertThat(aware.routingStats().toOtherNode()).isZero();
			// 2 requests per key, each reaching a node that is not the replica 2 times in
			// 3.
			long requests = 2L * KEYS * ROUNDS;
			assertThat(calls[1]).as("calls to peers with any-node routing").isBetween(requests / 2, requests * 9 / 10);
			System.out.printf(
					"replica-aware %.0f us per request, any-node %.0f us per request (%d requests each, put+get, %d"
							+ " calls to peers with any-node)%n",
					nanos[0] / 1e3 / requests, nanos[1] / 1e3 / requests, requests, calls[1]);
		}
	}

	/** A put and a get of {@link #KEYS} keys, one at a time: the time taken. */
	private static long run(QuorumKvClient client, String prefix) {
		byte[] value = "value".getBytes(StandardCharsets.UTF_8);
		long start = System.nanoTime();
		for (int i = 0; i < KEYS; i++) {
			client.put(prefix + i, value).block(WAIT);
			assertThat(client.get(prefix + i).block(WAIT)).isEqualTo(value);
		}
		return System.nanoTime() - start;
	}

	/** Gets and upserts the nodes sent to peers, all nodes together. */
	private long peerCalls() throws Exception {
		long calls = 0;
		for (URI node : this.nodes.urls()) {
			HttpResponse<String> metrics = SCRAPER.send(
					HttpRequest.newBuilder(node.resolve("/actuator/prometheus")).timeout(WAIT).build(),
					HttpResponse.BodyHandlers.ofString());
			assertThat(metrics.statusCode()).isEqualTo(200);
			for (String line : metrics.body().split("\n")) {
				if (line.startsWith("quorumkv_replica_requests_seconds_count{")
						&& (line.contains("op=\"get\"") || line.contains("op=\"upsert\""))) {
					calls += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
				}
			}
		}
		return calls;
	}

}
