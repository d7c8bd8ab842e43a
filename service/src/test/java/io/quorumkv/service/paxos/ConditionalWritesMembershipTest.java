package io.quorumkv.service.paxos;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.support.EntityCluster;
import io.quorumkv.service.support.MetadataCluster;
import io.quorumkv.service.support.TestCluster;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Conditional writes while the ring changes (issue #56, item 6), on real nodes in this
 * JVM (three seeds, RF 2, a newcomer): clients increment counters by GET and PUT If-Match
 * while the newcomer joins and then a seed is decommissioned, so that keys move to new
 * owners in the middle of their rounds (a round then needs a majority of the old owners
 * and of the new). Every counter ends at exactly its acknowledged increments plus the
 * unknown ones that were applied, and no two acknowledged increments of one counter wrote
 * the same count (no lost update across the change).
 */
class ConditionalWritesMembershipTest {

	private static final int KEYS = 6;

	private static final int CLIENTS = 6;

	@TempDir
	static Path root;

	static MetadataCluster metadata;

	static TestCluster cluster;

	static EntityCluster entities;

	@BeforeAll
	static void start() {
		metadata = MetadataCluster.create(root, 4,
				MetadataCluster.operated(Map.of("quorumkv.cluster.membership.poll-interval", "200ms")));
		cluster = metadata.nodes();
		entities = EntityCluster.over(cluster);
		String seeds = cluster.url(0) + "," + cluster.url(1) + "," + cluster.url(2);
		for (int node = 0; node < 4; node++) {
			cluster.start(node, Map.of("quorumkv.cluster.nodes", seeds));
		}
	}

	@AfterAll
	static void stop() {
		metadata.close();
	}

	@Test
	void countersIncrementedThroughAJoinAndADecommissionLoseNoIncrement() throws Exception {
		for (int key = 0; key < KEYS; key++) {
			assertThat(send(1, "PUT", "id=c" + key, "0:start:0", "If-None-Match", "*").statusCode()).isEqualTo(201);
		}
		Map<Integer, Set<String>> acknowledged = new ConcurrentHashMap<>();
		Map<Integer, Set<String>> unknown = new ConcurrentHashMap<>();
		Map<Integer, Set<String>> read = new ConcurrentHashMap<>();
		for (int key = 0; key < KEYS; key++) {
			acknowledged.put(key, ConcurrentHashMap.newKeySet());
			unknown.put(key, ConcurrentHashMap.newKeySet());
			read.put(key, ConcurrentHashMap.newKeySet());
		}
		AtomicBoolean changing = new AtomicBoolean(true);
		AtomicInteger conflicts = new AtomicInteger();
		AtomicInteger refused = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
		List<Future<?>> done = new ArrayList<>();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
		for (int c = 0; c < CLIENTS; c++) {
			int client = c;
			done.add(pool.submit(() -> {
				// Through nodes 1 and 2 only: node 0 leaves, node 3 arrives.
				for (int attempt = 0; (changing.get() || attempt < 10) && System.nanoTime() < deadline; attempt++) {
					int key = (client + attempt) % KEYS;
					int node = 1 + (attempt % 2);
					HttpResponse<String> current = send(node, "GET", "id=c" + key, null);
					if (current.statusCode() != 200) {
						refused.incrementAndGet();
						continue;
					}
					read.get(key).add(current.body());
					String next = (count(current.body()) + 1) + ":" + client + ":" + attempt;
					HttpResponse<String> written = send(node, "PUT", "id=c" + key, next, "If-Match",
							current.headers().firstValue("ETag").orElseThrow());
					switch (written.statusCode()) {
						case 201 -> acknowledged.get(key).add(next);
						case 412 -> conflicts.incrementAndGet();
						case 503, 504 -> unknown.get(key).add(next);
						default -> throw new AssertionError(written.statusCode() + " " + written.body());
					}
				}
				return null;
			}));
		}
		try {
			long epoch = metadata.ring(1).epoch();
			metadata.admin(1, "join", "{\"url\":\"" + cluster.url(3) + "\"}", 200);
			settled(epoch, 3, true);
			epoch = metadata.ring(1).epoch();
			metadata.admin(1, "decommission", "{\"url\":\"" + cluster.url(0) + "\"}", 200);
			settled(epoch, 0, false);
		}
		finally {
			changing.set(false);
		}
		for (Future<?> future : done) {
			future.get(150, TimeUnit.SECONDS);
		}
		pool.shutdown();
		int total = 0;
		for (int key = 0; key < KEYS; key++) {
			String last = send(2, "GET", "id=c" + key + "&consistency=serial", null).body();
			read.get(key).add(last);
			Set<String> seen = read.get(key);
			long applied = unknown.get(key).stream().filter(seen::contains).count();
			Set<String> acked = acknowledged.get(key);
			total += acked.size();
			assertThat(acked.stream().map(ConditionalWritesMembershipTest::count).distinct().count())
				.as("key %d: no two acknowledged increments wrote the same count", key)
				.isEqualTo(acked.size());
			assertThat(count(last))
				.as("key %d: the counter against %d acknowledged and %d applied unknown increments", key, acked.size(),
						applied)
				.isEqualTo(acked.size() + applied);
		}
		System.out.println("ConditionalWritesMembershipTest: " + total + " acknowledged increments, "
				+ unknown.values().stream().mapToInt(Set::size).sum() + " unknown, " + conflicts + " conflicts, "
				+ refused + " reads refused, over a join and a decommission");
		assertThat(total).as("increments acknowledged while the ring changed").isGreaterThan(KEYS);
	}

	/**
	 * Waits until nodes 1 and 2 serve the change's end, with {@code node} a member or
	 * not.
	 */
	private static void settled(long epoch, int node, boolean member) {
		eventually(Duration.ofSeconds(90), () -> {
			for (int serving = 1; serving <= 2; serving++) {
				Ring ring = metadata.ring(serving);
				assertThat(ring.epoch()).isGreaterThan(epoch);
				assertThat(ring.change()).as("node %d's ring", serving).isNull();
				String id = ring.nodeAt(URI.create(cluster.url(node))).map((n) -> n.id()).orElse("none");
				assertThat(ring.isMember(id)).as("node %d a member of node %d's ring", node, serving).isEqualTo(member);
			}
		});
	}

	private HttpResponse<String> send(int node, String method, String query, @Nullable String body, String... headers)
			throws java.io.IOException, InterruptedException {
		return entities.send(node, method, query, body, headers);
	}

	private static long count(String value) {
		return Long.parseLong(value.substring(0, value.indexOf(':')));
	}

}
