package io.quorumkv.service.ops;

import static io.quorumkv.service.support.DownPeerTopology.DEAD;
import static io.quorumkv.service.support.DownPeerTopology.SELF;
import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;

import io.quorumkv.service.QuorumKvApplication;
import io.quorumkv.service.support.DownPeerTopology;
import io.quorumkv.service.support.TestClients;
import io.quorumkv.service.support.TestKeys;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * {@code /actuator/quorumkv} of a node whose only peer is down: the peer shows as down
 * with the write it missed as a pending hint, the placement spread and the storage, and
 * flush and compact answer once done.
 */
@SpringBootTest(classes = QuorumKvApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,quorumkv",
				"quorumkv.cluster.secret=endpoint-test-secret", "quorumkv.cluster.replica-timeout=500ms",
				"quorumkv.cluster.connect-timeout=200ms", "quorumkv.storage.lsm.memtable-size=64KB",
				"quorumkv.cluster.hints.delivery-interval=10s" })
// The context closes with the class, before JUnit deletes its static data folder; cached,
// it would close at JVM exit into a deleted folder (H2 then re-creates it for its trace
// file).
@DirtiesContext
class QuorumKvEndpointTest {

	@TempDir
	static Path data;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		DownPeerTopology.register(registry, data);
		TestKeys.properties().forEach((name, value) -> registry.add(name, () -> value));
	}

	@LocalServerPort
	int port;

	WebTestClient client;

	@BeforeEach
	void client() {
		// The admin operations and views need an admin credential.
		this.client = TestClients.forPort(this.port)
			.mutate()
			.defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(TestKeys.ADMIN))
			.build();
	}

	@Test
	void showsPeersPlacementHintsAndStorage() {
		this.client.put()
			.uri("/v0/entity?id=k1&replicas=1/2")
			.bodyValue("v1".getBytes())
			.exchange()
			.expectStatus()
			.isCreated();
		eventually(Duration.ofSeconds(10),
				() -> this.client.get()
					.uri("/actuator/quorumkv")
					.exchange()
					.expectStatus()
					.isOk()
					.expectBody()
					.jsonPath("$.nodes[1].pendingHints")
					.value((Integer pending) -> assertThat(pending).isPositive()));
		this.client.get()
			.uri("/actuator/quorumkv")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.node")
			.isEqualTo(SELF)
			.jsonPath("$.nodes.length()")
			.isEqualTo(2)
			.jsonPath("$.nodes[0].url")
			.isEqualTo(SELF)
			.jsonPath("$.nodes[0].state")
			.isEqualTo("self")
			.jsonPath("$.nodes[1].url")
			.isEqualTo(DEAD)
			.jsonPath("$.nodes[1].state")
			.isEqualTo("down")
			.jsonPath("$.nodes[1].reachable")
			.isEqualTo(false)
			.jsonPath("$.nodes[1].breaker")
			.value((String breaker) -> assertThat(breaker).isIn("CLOSED", "OPEN", "HALF_OPEN"))
			.jsonPath("$.nodes[1].lastOutcome")
			.value((String outcome) -> assertThat(outcome).isIn("error", "breaker-open"))
			.jsonPath("$.nodes[1].maxInFlight")
			.value((Integer max) -> assertThat(max).isPositive().isEqualTo(512 * (max / 512)))
			.jsonPath("$.nodes[1].inFlight")
			.isEqualTo(0)
			.jsonPath("$.nodes[1].latency.calls")
			.value((Integer calls) -> assertThat(calls).isPositive())
			.jsonPath("$.nodes[1].latency.p99Ms")
			.value((Double p99) -> assertThat(p99).isPositive())
			.jsonPath("$.placement.strategy")
			.isEqualTo("rendezvous")
			.jsonPath("$.placement.sampleKeys")
			.isEqualTo(10_000)
			.jsonPath("$.placement.shareByFrom['1']['" + SELF + "']")
			.value((Double share) -> assertThat(share).isBetween(0.45, 0.55))
			.jsonPath("$.placement.shareByFrom['2']['" + DEAD + "']")
			.isEqualTo(1.0)
			.jsonPath("$.hints.pending")
			.value((Integer pending) -> assertThat(pending).isPositive())
			.jsonPath("$.hints.stored")
			.value((Integer stored) -> assertThat(stored).isPositive())
			.jsonPath("$.storage.backend")
			.isEqualTo("lsm")
			.jsonPath("$.storage.healthy")
			.isEqualTo(true)
			.jsonPath("$.storage.counters.upserts")
			.value((Integer upserts) -> assertThat(upserts).isPositive())
			.jsonPath("$.storage.derived.levels[0].level")
			.isEqualTo(0)
			.jsonPath("$.storage.derived.pendingCompactionBytes")
			.exists();
	}

	@Test
	void textSectionsAreAlignedTables() {
		String status = text("status");
		assertThat(status).startsWith("node " + SELF + ": placement rendezvous, backend lsm, storage healthy\n");
		assertThat(status.lines().skip(1).findFirst()).get()
			.asString()
			.matches("NODE +STATE +SEEN +BREAKER +LAST +IN-FLIGHT +P50-MS +P99-MS +MEAN-MS +HINTS +OWNS");
		assertThat(status).containsPattern(SELF + " +self +- +- +- ");
		assertThat(text("ring")).containsPattern("NODE +URL +STATE +FROM=1 +FROM=2\n")
			.containsPattern(DEAD + " +" + DEAD + " +normal +\\d+\\.\\d% +100\\.0%")
			.contains("epoch 1, replication factor 2, placement rendezvous; no change under way");
		assertThat(text("hints")).contains("PEER").contains(DEAD);
		assertThat(text("storage")).contains("backend lsm, healthy").containsPattern("\nupserts +\\d+\n");
		this.client.get().uri("/actuator/quorumkv/nonsense").exchange().expectStatus().isBadRequest();
	}

	@Test
	void flushesAndCompactsOnRequest() {
		for (int i = 0; i < 20; i++) {
			this.client.put()
				.uri("/v0/entity?id=c" + i + "&replicas=1/2")
				.bodyValue(new byte[8192])
				.exchange()
				.expectStatus()
				.isCreated();
		}
		this.client.post()
			.uri("/actuator/quorumkv/flush")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.action")
			.isEqualTo("flush")
			.jsonPath("$.node")
			.isEqualTo(SELF);
		eventually(Duration.ofSeconds(10),
				() -> this.client.get()
					.uri("/actuator/quorumkv")
					.exchange()
					.expectBody()
					.jsonPath("$.storage.derived.tables")
					.value((Integer tables) -> assertThat(tables).isPositive()));
		this.client.post()
			.uri("/actuator/quorumkv/compact")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.action")
			.isEqualTo("compact");
		this.client.get()
			.uri("/actuator/quorumkv")
			.exchange()
			.expectBody()
			.jsonPath("$.storage.counters['compaction.count']")
			.value((Integer count) -> assertThat(count).isPositive())
			.jsonPath("$.storage.derived.writeAmplification")
			.value((Double amplification) -> assertThat(amplification).isPositive());
		this.client.post()
			.uri("/actuator/quorumkv/nonsense")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isBadRequest();
	}

	private String text(String section) {
		byte[] body = this.client.get()
			.uri("/actuator/quorumkv/" + section)
			.accept(MediaType.TEXT_PLAIN)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.contentTypeCompatibleWith(MediaType.TEXT_PLAIN)
			.expectBody()
			.returnResult()
			.getResponseBody();
		return new String((body != null) ? body : new byte[0]);
	}

}
