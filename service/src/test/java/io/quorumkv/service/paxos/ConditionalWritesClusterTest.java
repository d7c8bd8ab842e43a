package io.quorumkv.service.paxos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.service.support.EntityCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Conditional writes and serial reads on three real nodes: RFC 9110's 201/412 answers
 * with their ETags, a serial read through another node, and a counter that eight clients
 * increment by GET and PUT If-Match through every node, which ends at exactly the
 * increments applied.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConditionalWritesClusterTest {

	@TempDir
	static Path root;

	private EntityCluster cluster;

	@BeforeAll
	void start() {
		this.cluster = EntityCluster.start(root);
	}

	@AfterAll
	void stop() {
		this.cluster.close();
	}

	private HttpResponse<String> send(int node, String method, String query, String body, String... headers)
			throws IOException, InterruptedException {
		return this.cluster.send(node, method, query, body, headers);
	}

	private static String etag(HttpResponse<?> response) {
		return EntityCluster.etag(response);
	}

	@Test
	void conditionsAreHeldAndAFailedOneAnswers412WithTheCurrentVersion() throws Exception {
		HttpResponse<String> created = send(0, "PUT", "id=doc", "v1", "If-None-Match", "*");
		assertThat(created.statusCode()).isEqualTo(201);
		String v1 = etag(created);
		assertThat(v1).startsWith("\"");
		HttpResponse<String> again = send(1, "PUT", "id=doc", "other", "If-None-Match", "*");
		assertThat(again.statusCode()).isEqualTo(412);
		assertThat(etag(again)).isEqualTo(v1);
		assertThat(send(2, "GET", "id=doc", null).body()).isEqualTo("v1");
		HttpResponse<String> updated = send(2, "PUT", "id=doc", "v2", "If-Match", v1);
		assertThat(updated.statusCode()).isEqualTo(201);
		String v2 = etag(updated);
		HttpResponse<String> stale = send(0, "PUT", "id=doc", "lost", "If-Match", v1);
		assertThat(stale.statusCode()).isEqualTo(412);
		assertThat(etag(stale)).isEqualTo(v2);
		assertThat(send(1, "PUT", "id=doc", "v3", "If-Match", "\"1\", " + v2).statusCode()).isEqualTo(201);
		assertThat(send(1, "PUT", "id=doc", "weak", "If-Match", "W/" + v2).statusCode()).isEqualTo(412);
		HttpResponse<String> serial = send(0, "GET", "id=doc&consistency=serial", null);
		assertThat(serial.statusCode()).isEqualTo(200);
		assertThat(serial.body()).isEqualTo("v3");
		assertThat(send(2, "DELETE", "id=doc", null, "If-Match", v2).statusCode()).isEqualTo(412);
		assertThat(send(2, "DELETE", "id=doc", null, "If-Match", etag(serial)).statusCode()).isEqualTo(202);
		HttpResponse<String> gone = send(1, "PUT", "id=doc", "x", "If-Match", "*");
		assertThat(gone.statusCode()).isEqualTo(412);
		assertThat(etag(gone)).isNull();
		assertThat(send(1, "GET", "id=doc&consistency=serial", null).statusCode()).isEqualTo(404);
		assertThat(send(0, "PUT", "id=doc", "v4", "If-None-Match", "*").statusCode()).isEqualTo(201);
		assertThat(send(0, "GET", "id=doc&consistency=serial&ack=1", null).statusCode()).isEqualTo(400);
		assertThat(send(0, "GET", "id=doc&consistency=one", null).statusCode()).isEqualTo(400);
		assertThat(send(0, "PUT", "id=doc&ack=1", "v5", "If-Match", "*").statusCode()).isEqualTo(400);
		assertThat(send(0, "PUT", "id=doc", "v5", "If-Match", "nope").statusCode()).isEqualTo(400);
	}

	/**
	 * Eight clients, each a loop of GET and PUT If-Match through the three nodes in turn.
	 * A value is {@code count:client:attempt}, so every write is told apart: a write
	 * answered 504 (outcome unknown) was applied exactly when some later read saw its
	 * value (the write after it read it to name its ETag) or it is the last. The counter
	 * then ends at exactly the acknowledged increments plus those, and no two
	 * acknowledged increments wrote the same count (no lost update).
	 */
	@Test
	void eightClientsIncrementingByGetAndIfMatchLoseNoIncrement() throws Exception {
		int clients = 8;
		int perClient = 6;
		assertThat(send(0, "PUT", "id=counter", "0:start:0", "If-None-Match", "*").statusCode()).isEqualTo(201);
		Set<String> acknowledged = ConcurrentHashMap.newKeySet();
		Set<String> unknown = ConcurrentHashMap.newKeySet();
		Set<String> read = ConcurrentHashMap.newKeySet();
		AtomicInteger conflicts = new AtomicInteger();
		Map<String, Integer> reasons = new ConcurrentHashMap<>();
		ExecutorService pool = Executors.newFixedThreadPool(clients);
		List<Future<?>> done = new ArrayList<>();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		for (int c = 0; c < clients; c++) {
			int client = c;
			done.add(pool.submit(() -> {
				int finished = 0;
				for (int attempt = 0; finished < perClient && System.nanoTime() < deadline; attempt++) {
					int node = (client + attempt) % 3;
					HttpResponse<String> current = send(node, "GET", "id=counter", null);
					if (current.statusCode() != 200) {
						continue;
					}
					read.add(current.body());
					String next = (count(current.body()) + 1) + ":" + client + ":" + attempt;
					HttpResponse<String> written = send(node, "PUT", "id=counter", next, "If-Match", etag(current));
					switch (written.statusCode()) {
						case 201 -> {
							acknowledged.add(next);
							finished++;
						}
						case 412 -> conflicts.incrementAndGet();
						case 504 -> {
							reasons.merge(written.body().strip(), 1, Integer::sum);
							unknown.add(next);
							finished++;
						}
						default -> throw new AssertionError(written.statusCode() + " " + written.body());
					}
				}
				return null;
			}));
		}
		for (Future<?> future : done) {
			future.get(90, TimeUnit.SECONDS);
		}
		pool.shutdown();
		String last = send(1, "GET", "id=counter&consistency=serial", null).body();
		read.add(last);
		long applied = unknown.stream().filter(read::contains).count();
		System.out.println("counter " + last + ": acknowledged " + acknowledged.size() + ", unknown " + unknown.size()
				+ " (applied " + applied + "), conflicts " + conflicts + ", 504s " + reasons);
		assertThat(acknowledged.size() + unknown.size()).as("every client finished").isEqualTo(clients * perClient);
		assertThat(acknowledged.stream().map(ConditionalWritesClusterTest::count).distinct().count())
			.as("no two acknowledged increments wrote the same count")
			.isEqualTo(acknowledged.size());
		assertThat(count(last))
			.as("the counter against %d acknowledged and %d applied unknown increments", acknowledged.size(), applied)
			.isEqualTo(acknowledged.size() + applied);
		for (int node = 0; node < 3; node++) {
			assertThat(send(node, "GET", "id=counter", null).body()).isEqualTo(last);
		}
	}

	private static long count(String value) {
		return Long.parseLong(value.substring(0, value.indexOf(':')));
	}

}
