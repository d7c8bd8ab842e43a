package io.quorumkv.service.cluster;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.support.StreamCalls;
import io.quorumkv.service.peer.StreamFrames.Result;
import io.quorumkv.service.peer.StreamFrames;
import io.quorumkv.service.peer.StreamResults;
import io.quorumkv.service.replication.HintStore;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.service.support.TestTls;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Three real nodes on loopback: quorum reads and writes through any node, nodes stopped
 * and restarted, hinted handoff, read repair, convergence and the cluster-wide range. One
 * cluster serves every test of the class (starting three nodes is most of a test's time):
 * each test writes keys of its own, and after each test every stopped node is started
 * again and the cluster is back to serving {@code 3/3} through every node.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterTest {

	@TempDir
	static Path root;

	TestCluster cluster;

	@BeforeAll
	void start() {
		this.cluster = new TestCluster(root, 3, nodeProperties(), tls(root.resolve("tls"))).startAll();
	}

	/**
	 * Starts the nodes a test stopped, then waits (bounded) until a {@code 3/3} write
	 * through each node succeeds: a restarted node serves once the metadata group has
	 * confirmed its ring, and its peers' breakers toward it have closed again.
	 */
	@AfterEach
	void restoreEveryNode() {
		for (int node = 0; node < this.cluster.size(); node++) {
			if (!this.cluster.running(node)) {
				this.cluster.start(node);
			}
		}
		eventually(Duration.ofSeconds(60), () -> {
			for (int node = 0; node < this.cluster.size(); node++) {
				put(node, "settled-" + node, "v", "3/3").expectStatus().isCreated();
			}
		});
	}

	/** Settings of every node, beyond what {@link TestCluster} sets. */
	Map<String, String> nodeProperties() {
		return Map.of();
	}

	/** TLS of the nodes, or null for plain HTTP. */
	@Nullable TestTls tls(Path folder) {
		return null;
	}

	@AfterAll
	void stop() {
		this.cluster.close();
	}

	private WebTestClient.ResponseSpec put(int node, String key, String value, String replicas) {
		return this.cluster.client(node)
			.put()
			.uri(this.cluster.uri(node, "/v0/entity?id=" + key + "&replicas=" + replicas))
			.bodyValue(value.getBytes(StandardCharsets.UTF_8))
			.exchange();
	}

	private WebTestClient.ResponseSpec get(int node, String key, String replicas) {
		return this.cluster.client(node)
			.get()
			.uri(this.cluster.uri(node, "/v0/entity?id=" + key + "&replicas=" + replicas))
			.exchange();
	}

	private WebTestClient.ResponseSpec delete(int node, String key, String replicas) {
		return this.cluster.client(node)
			.delete()
			.uri(this.cluster.uri(node, "/v0/entity?id=" + key + "&replicas=" + replicas))
			.exchange();
	}

	@Test
	void everyAckFromCombinationWritesThroughOneNodeAndReadsThroughAnother() {
		for (int from = 1; from <= 3; from++) {
			for (int ack = 1; ack <= from; ack++) {
				for (int writer = 0; writer < 3; writer++) {
					String key = "combo-" + ack + "-" + from + "-" + writer;
					int reader = (writer + 1) % 3;
					put(writer, key, "v-" + key, ack + "/" + from).expectStatus().isCreated();
					// A read quorum that intersects the write quorum sees the write at
					// once.
					int readAck = from - ack + 1;
					get(reader, key, readAck + "/" + from).expectStatus()
						.isOk()
						.expectBody(String.class)
						.isEqualTo("v-" + key);
					// The write went to all `from` replicas, so the default read sees it
					// too.
					eventually(Duration.ofSeconds(5),
							() -> get(reader, key, "2/3").expectStatus()
								.isOk()
								.expectBody(String.class)
								.isEqualTo("v-" + key));
				}
			}
		}
		put(0, "too-many", "v", "1/4").expectStatus().isBadRequest();
	}

	@Test
	void oneNodeDownQuorumStillServesAndAllReplicasFailFast() {
		put(0, "k1", "before", "3/3").expectStatus().isCreated();
		this.cluster.stop(2);
		put(0, "k1", "after", "2/3").expectStatus().isCreated();
		get(1, "k1", "2/3").expectStatus().isOk().expectBody(String.class).isEqualTo("after");
		delete(1, "k1", "2/3").expectStatus().isAccepted();
		get(0, "k1", "2/3").expectStatus().isNotFound();

		put(0, "k2", "v", "3/3").expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
		// Once the breaker of the dead node is open, 3/3 fails fast, far under the
		// timeout.
		for (int i = 0; i < 10; i++) {
			get(0, "k2", "3/3").expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
		}
		long start = System.nanoTime();
		for (int i = 0; i < 5; i++) {
			put(1, "k3", "v", "3/3").expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
		}
		long averageMillis = (System.nanoTime() - start) / 5 / 1_000_000;
		assertThat(averageMillis).as("3/3 with a dead replica answers well under the 3 s replica timeout")
			.isLessThan(500);
	}

	@Test
	void twoNodesDownOnlyOneAckSucceeds() {
		this.cluster.stop(1);
		this.cluster.stop(2);
		put(0, "lonely", "v", "2/3").expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
		put(0, "lonely", "v", "1/3").expectStatus().isCreated();
		get(0, "lonely", "1/3").expectStatus().isOk().expectBody(String.class).isEqualTo("v");
		get(0, "lonely", "2/3").expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
	}

	@Test
	void deleteMadeWhileAReplicaWasDownWinsAfterItReturns() {
		put(0, "doomed", "alive", "3/3").expectStatus().isCreated();
		this.cluster.stop(2);
		delete(0, "doomed", "2/3").expectStatus().isAccepted();
		this.cluster.start(2);
		// Hinted handoff delivers the tombstone to the returning replica.
		eventually(Duration.ofSeconds(15),
				() -> assertThat(this.cluster.localValue(2, "doomed")).isEqualTo("<tombstone>"));
		for (int node = 0; node < 3; node++) {
			assertThat(this.cluster.localValue(node, "doomed")).as("node %d", node).isEqualTo("<tombstone>");
			get(node, "doomed", "1/3").expectStatus().isNotFound();
		}
	}

	@Test
	void readRepairFixesAStaleReplica() {
		readRepairsNode2Through(1);
	}

	@Test
	void readRepairFixesTheCoordinatorsOwnStaleCopy() {
		// Node 2 coordinates the read: the stale replica is its own storage.
		readRepairsNode2Through(2);
	}

	/**
	 * Leaves node 2 with an older version than the others (its hint dropped, so that only
	 * read repair can fix it), then reads through {@code coordinator}.
	 */
	private void readRepairsNode2Through(int coordinator) {
		String key = "stale-via-" + coordinator;
		put(0, key, "old", "3/3").expectStatus().isCreated();
		this.cluster.stop(2);
		put(0, key, "new", "2/3").expectStatus().isCreated();
		this.cluster.stop(0);
		deleteFolder(root.resolve("node0").resolve("hints"));
		this.cluster.start(0);
		this.cluster.start(2);
		assertThat(this.cluster.localValue(2, key)).isEqualTo("old");
		get(coordinator, key, "3/3").expectStatus().isOk().expectBody(String.class).isEqualTo("new");
		eventually(Duration.ofSeconds(5), () -> assertThat(this.cluster.localValue(2, key)).isEqualTo("new"));
	}

	/**
	 * One write of the contended key: its value, the wall clock (microseconds, the
	 * coordinators' clock) before it was sent and after it was answered, and its status.
	 */
	record Contended(String value, long sentMicros, long answeredMicros, int status) {

	}

	@Test
	void concurrentWritersThroughDifferentNodesConverge() throws Exception {
		List<Contended> writes = java.util.Collections.synchronizedList(new ArrayList<>());
		ExecutorService pool = Executors.newFixedThreadPool(6);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < 6; t++) {
				int writer = t;
				futures.add(pool.submit(() -> {
					for (int i = 0; i < 30; i++) {
						String value = "w" + writer + "-" + i;
						long sent = wallMicros();
						// On an overloaded machine a write may time out (504);
						// convergence must hold anyway.
						put(writer % 3, "contended", value, "2/3").expectStatus().value((status) -> {
							writes.add(new Contended(value, sent, wallMicros(), status));
							assertThat(status).isIn(201, 504);
						});
					}
				}));
			}
			for (Future<?> future : futures) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		List<String> legal = newestPossible(writes);
		eventually(Duration.ofSeconds(5), () -> {
			String first = this.cluster.localValue(0, "contended");
			Long timestamp = this.cluster.localTimestamp(0, "contended");
			assertThat(first).isNotNull();
			for (int node = 1; node < 3; node++) {
				assertThat(this.cluster.localValue(node, "contended")).isEqualTo(first);
				assertThat(this.cluster.localTimestamp(node, "contended")).isEqualTo(timestamp);
			}
			assertThat(first).as("the value every replica holds, of %d writes", writes.size()).isIn(legal);
		});
	}

	/**
	 * The values that may legally win. Each coordinator stamps a write before it answers,
	 * with its hybrid logical clock: microseconds of the wall clock all three nodes of
	 * this JVM share, bumped by at most a few microseconds past it. So a write sent more
	 * than a millisecond after another was answered is stamped later and wins over it,
	 * and the newest value is one of the writes (acknowledged, or timed out and so
	 * perhaps applied) that no acknowledged write sent after their answer supersedes.
	 */
	private static List<String> newestPossible(List<Contended> writes) {
		List<Contended> acknowledged = writes.stream().filter((write) -> write.status() == 201).toList();
		assertThat(acknowledged).as("acknowledged writes of the contended key").isNotEmpty();
		return writes.stream()
			.filter((write) -> acknowledged.stream()
				.noneMatch((later) -> later.sentMicros() > write.answeredMicros() + 1_000))
			.map(Contended::value)
			.toList();
	}

	private static long wallMicros() {
		java.time.Instant now = java.time.Instant.now();
		return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
	}

	@Test
	void hintsSurviveACoordinatorRestartAndAreDelivered() {
		this.cluster.stop(2);
		for (int i = 0; i < 20; i++) {
			put(0, "hinted-" + i, "v" + i, "2/3").expectStatus().isCreated();
		}
		Node peer2 = Node.of(this.cluster.url(2));
		eventually(Duration.ofSeconds(5),
				() -> assertThat(this.cluster.bean(0, HintStore.class).pending(peer2)).isGreaterThanOrEqualTo(20));
		this.cluster.stop(0);
		this.cluster.start(0);
		assertThat(this.cluster.bean(0, HintStore.class).pending(peer2)).isGreaterThanOrEqualTo(20);
		this.cluster.start(2);
		eventually(Duration.ofSeconds(15), () -> {
			for (int i = 0; i < 20; i++) {
				assertThat(this.cluster.localValue(2, "hinted-" + i)).isEqualTo("v" + i);
			}
		});
		eventually(Duration.ofSeconds(5),
				() -> assertThat(this.cluster.bean(0, HintStore.class).pending(peer2)).isZero());
	}

	@Test
	void clusterRangeIsCompleteOrderedAndFreeOfDuplicatesAndDeletes() {
		TreeMap<String, String> expected = new TreeMap<>();
		for (int i = 0; i < 300; i++) {
			String key = String.format("range-%04d", i);
			// 1/1 writes: each key lives on one node only, chosen by placement.
			put(i % 3, key, "v" + i, (i % 2 == 0) ? "1/1" : "2/3").expectStatus().isCreated();
			expected.put(key, "v" + i);
		}
		for (int i = 0; i < 300; i += 7) {
			String key = String.format("range-%04d", i);
			delete(i % 3, key, "3/3").expectStatus().isAccepted();
			expected.remove(key);
		}
		for (int node = 0; node < 3; node++) {
			String body = this.cluster.client(node)
				.get()
				.uri(this.cluster.uri(node, "/v0/entities?start=range-&end=range."))
				.accept(MediaType.APPLICATION_OCTET_STREAM)
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody(String.class)
				.returnResult()
				.getResponseBody();
			StringBuilder expectedBody = new StringBuilder();
			expected.forEach((k, v) -> expectedBody.append(k).append('\n').append(v));
			assertThat(body).as("range through node %d", node).isEqualTo(expectedBody.toString());
		}
	}

	@Test
	void rangeWithANodeDownIsServedByTheOthersAtAQuorumAndRefusedAtAll() {
		// Keys of this test only: the range below is theirs (the cluster is shared).
		for (int i = 0; i < 20; i++) {
			put(i % 3, "down-r" + i, "v" + i, "2/3").expectStatus().isCreated();
		}
		this.cluster.stop(2);
		StringBuilder expected = new StringBuilder();
		new TreeMap<>(java.util.stream.IntStream.range(0, 20)
			.boxed()
			.collect(java.util.stream.Collectors.toMap((i) -> "down-r" + i, (i) -> "v" + i)))
			.forEach((k, v) -> expected.append(k).append('\n').append(v));
		for (String replicas : List.of("", "&replicas=2/3", "&replicas=1/3")) {
			this.cluster.client(0)
				.get()
				.uri(this.cluster.uri(0, "/v0/entities?start=down-r&end=down-s" + replicas))
				.accept(MediaType.APPLICATION_OCTET_STREAM)
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody(String.class)
				.isEqualTo(expected.toString());
		}
		this.cluster.client(0)
			.get()
			.uri(this.cluster.uri(0, "/v0/entities?start=down-r&end=down-s&replicas=3/3"))
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.SERVICE_UNAVAILABLE)
			.expectHeader()
			.exists("Retry-After")
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("unavailable"));
	}

	private static void deleteFolder(Path folder) {
		try (var paths = java.nio.file.Files.walk(folder)) {
			paths.sorted(java.util.Comparator.reverseOrder()).forEach((p) -> p.toFile().delete());
		}
		catch (java.io.IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void aStreamAnswersEachOperationByIdAndRefusesMalformedFramesAndStrangers() {
		put(0, "streamed", "v", "3/3").expectStatus().isCreated();
		MeterRegistry meters = this.cluster.bean(0, MeterRegistry.class);
		assertThat(meters.find("quorumkv.replica.stream.chunks").counters())
			.anySatisfy((chunks) -> assertThat(chunks.count()).isPositive());
		byte[] key = "direct".getBytes(StandardCharsets.UTF_8);
		java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
		body.writeBytes(operation(11, StreamFrames.UPSERT, key, Entry.value(key, "x".getBytes(), 42)));
		body.writeBytes(operation(12, StreamFrames.GET, key, null));
		body.writeBytes(operation(13, StreamFrames.GET, "never".getBytes(), null));
		body.writeBytes(operation(14, StreamFrames.UPSERT, key, Entry.tombstone(key, 41)));
		body.writeBytes(operation(15, StreamFrames.GET, key, null));
		byte[] answer = stream(1, body.toByteArray(), TestCluster.SECRET).expectStatus()
			.isOk()
			.expectBody(byte[].class)
			.returnResult()
			.getResponseBody();
		Map<Integer, Result> results = new java.util.HashMap<>();
		for (Result result : StreamResults.decodeAll(answer, 1 << 20)) {
			assertThat(results.put(result.id(), result)).as("one answer per id").isNull();
		}
		Entry found = Entry.value(key, "x".getBytes(), 42);
		assertThat(results).containsOnlyKeys(11, 12, 13, 14, 15);
		assertThat(results.get(11).type()).isEqualTo(StreamFrames.KEPT);
		assertThat(results.get(12).entry()).isEqualTo(found);
		assertThat(results.get(13).type()).isEqualTo(StreamFrames.ABSENT);
		assertThat(results.get(14).type()).isEqualTo(StreamFrames.KEPT);
		assertThat(results.get(15).entry()).isEqualTo(found);
		assertThat(this.cluster.localValue(1, "direct")).isEqualTo("x");
		stream(1, new byte[] { 0, 0, 0, 2, 9, 9 }, TestCluster.SECRET).expectStatus().isBadRequest();
		stream(1, new byte[] { 0x7f, 0, 0, 0 }, TestCluster.SECRET).expectStatus().isBadRequest();
		stream(1, body.toByteArray(), null).expectStatus().isUnauthorized();
		stream(1, body.toByteArray(), "wrong").expectStatus().isForbidden();
	}

	private static byte[] operation(int id, byte kind, byte[] key, @Nullable Entry entry) {
		return StreamFrames.encodeOperation(id, kind, 0, 10_000, key, entry);
	}

	/**
	 * A stream call: as a node ({@link TestCluster#SECRET}: the secret, or the node
	 * certificate with mutual TLS), without any proof (null), or with a wrong secret.
	 */
	private WebTestClient.ResponseSpec stream(int node, byte[] body, @Nullable String secret) {
		WebTestClient client = TestCluster.SECRET.equals(secret) ? this.cluster.internalClient(node)
				: this.cluster.client(node);
		return client.post().uri(this.cluster.uri(node, StreamCalls.PATH)).headers((headers) -> {
			if (secret != null && !TestCluster.SECRET.equals(secret)) {
				headers.set(InternalApi.SECRET, secret);
			}
		}).bodyValue(body).exchange();
	}

}
