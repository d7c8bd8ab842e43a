package io.quorumkv.service.cluster;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

import io.quorumkv.service.support.TestCluster;
import io.quorumkv.storage.contract.ManualClock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Writes with a time to live on three real nodes sharing a clock the test moves: the
 * coordinator's expiry reaches every replica (batch frames, hints), and the key expires
 * on all of them at once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterTtlTest {

	private final ManualClock clock = ManualClock.startingAt(Instant.now().truncatedTo(ChronoUnit.SECONDS));

	@TempDir
	static Path root;

	TestCluster cluster;

	/**
	 * One cluster for both tests: they write keys of their own, each expiry counted from
	 * the clock's time at its write, and the test that stops a node starts it again.
	 */
	@BeforeAll
	void start() {
		this.cluster = new TestCluster(root, 3, Map.of()).withClock(this.clock).startAll();
	}

	@AfterAll
	void stop() {
		this.cluster.close();
	}

	private WebTestClient.ResponseSpec put(int node, String query, String value) {
		return this.cluster.client(node)
			.put()
			.uri(this.cluster.uri(node, "/v0/entity?" + query))
			.bodyValue(value.getBytes(StandardCharsets.UTF_8))
			.exchange();
	}

	private WebTestClient.ResponseSpec get(int node, String query) {
		return this.cluster.client(node).get().uri(this.cluster.uri(node, "/v0/entity?" + query)).exchange();
	}

	@Test
	void theCoordinatorsExpiryReachesEveryReplicaAndTheKeyExpiresEverywhere() {
		put(0, "id=lease&ttl=60&replicas=3/3", "v").expectStatus().isCreated();
		Long timestamp = this.cluster.localTimestamp(0, "lease");
		assertThat(timestamp).isNotNull();
		for (int node = 0; node < 3; node++) {
			assertThat(this.cluster.localTimestamp(node, "lease")).as("node %d", node).isEqualTo(timestamp);
			assertThat(this.cluster.localExpiry(node, "lease")).as("node %d", node).isEqualTo(timestamp + 60_000_000L);
			get(node, "id=lease&replicas=1/3").expectStatus().isOk();
		}
		this.clock.advance(Duration.ofSeconds(61));
		for (int node = 0; node < 3; node++) {
			get(node, "id=lease&replicas=1/3").expectStatus().isNotFound();
			assertThat(this.cluster.localValue(node, "lease")).as("node %d's storage", node).isEqualTo("<tombstone>");
			this.cluster.client(node)
				.get()
				.uri(this.cluster.uri(node, "/v0/entities?start=lease&end=leasf"))
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.isEmpty();
		}
	}

	@Test
	void aHintCarriesTheExpiryToTheReplicaThatMissedTheWrite() {
		this.cluster.stop(2);
		put(0, "id=hinted&ttl=600&replicas=2/3", "v").expectStatus().isCreated();
		Long timestamp = this.cluster.localTimestamp(0, "hinted");
		this.cluster.start(2);
		eventually(Duration.ofSeconds(15),
				() -> assertThat(this.cluster.localExpiry(2, "hinted")).isEqualTo(timestamp + 600_000_000L));
		this.clock.advance(Duration.ofSeconds(600));
		assertThat(this.cluster.localValue(2, "hinted")).isEqualTo("<tombstone>");
		get(1, "id=hinted&replicas=3/3").expectStatus().isNotFound();
	}

}
