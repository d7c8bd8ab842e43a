package io.quorumkv.service.membership;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.storage.contract.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.http.MediaType;

/**
 * A membership change streams expiring values with their expiry: a newcomer joins three
 * nodes (RF 2) that hold writes with and without a time to live, on a clock the test
 * moves; each key the newcomer gains keeps the coordinator's expiry, and expires there
 * when it expires everywhere.
 */
class MembershipTtlTest {

	private static final int KEYS = 120;

	private static final long TTL_SECONDS = 600;

	private final ManualClock clock = ManualClock.startingAt(Instant.now().truncatedTo(ChronoUnit.SECONDS));

	@TempDir
	Path root;

	TestCluster cluster;

	@BeforeEach
	void start() {
		this.cluster = new TestCluster(this.root, 4,
				Map.of("quorumkv.cluster.replication-factor", "2", "management.endpoints.web.exposure.include",
						"health,quorumkv", "quorumkv.cluster.membership.poll-interval", "200ms"))
			.withClock(this.clock);
		String seeds = this.cluster.url(0) + "," + this.cluster.url(1) + "," + this.cluster.url(2);
		for (int node = 0; node < 4; node++) {
			this.cluster.start(node, Map.of("quorumkv.cluster.nodes", seeds));
		}
	}

	@AfterEach
	void stop() {
		this.cluster.close();
	}

	@Test
	void aJoiningNodeGetsEachExpiringValueWithItsExpiry() {
		for (int i = 0; i < KEYS; i++) {
			String query = "id=key-" + i + ((i % 2 == 0) ? "&ttl=" + TTL_SECONDS : "");
			this.cluster.client(i % 3)
				.put()
				.uri("/v0/entity?" + query)
				.bodyValue(("value-" + i).getBytes(StandardCharsets.UTF_8))
				.exchange()
				.expectStatus()
				.isCreated();
		}
		this.cluster.adminClient(0)
			.post()
			.uri("/actuator/quorumkv/join")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"url\":\"" + this.cluster.url(3) + "\"}")
			.exchange()
			.expectStatus()
			.isOk();
		eventually(Duration.ofSeconds(60), () -> {
			for (int node = 0; node < 4; node++) {
				Ring ring = this.cluster.bean(node, ClusterState.class).ring().orElseThrow();
				assertThat(ring.epoch()).as("epoch of node %d", node).isEqualTo(4);
				assertThat(ring.change()).isNull();
			}
		});

		// Every key on exactly RF nodes once the old owners have dropped what they gave
		// away: a key the stream lost would be on one.
		eventually(Duration.ofSeconds(30), () -> {
			List<String> wrong = new ArrayList<>();
			for (int i = 0; i < KEYS; i++) {
				int holders = 0;
				for (int node = 0; node < 4; node++) {
					holders += (this.cluster.localValue(node, "key-" + i) != null) ? 1 : 0;
				}
				if (holders != 2) {
					wrong.add("key-" + i + " on " + holders);
				}
			}
			assertThat(wrong).as("keys not on exactly 2 nodes").isEmpty();
		});
		List<String> gained = new ArrayList<>();
		for (int i = 0; i < KEYS; i++) {
			String key = "key-" + i;
			if (this.cluster.localValue(3, key) == null) {
				continue;
			}
			gained.add(key);
			assertThat(this.cluster.localValue(3, key)).isEqualTo("value-" + i);
			Long timestamp = this.cluster.localTimestamp(3, key);
			assertThat(timestamp).isNotNull();
			assertThat(this.cluster.localExpiry(3, key)).as("%s on the newcomer", key)
				.isEqualTo((i % 2 == 0) ? timestamp + TTL_SECONDS * 1_000_000L : null);
		}
		assertThat(gained).as("the newcomer's share of %d keys at RF 2 over 4 nodes", KEYS).hasSizeBetween(30, 90);
		assertThat(gained.stream().filter((key) -> Integer.parseInt(key.substring("key-".length())) % 2 == 0))
			.as("expiring keys the newcomer gained")
			.isNotEmpty();

		this.clock.advance(Duration.ofSeconds(TTL_SECONDS + 1));
		for (String key : gained) {
			int i = Integer.parseInt(key.substring("key-".length()));
			assertThat(this.cluster.localValue(3, key)).as("%s on the newcomer, expired", key)
				.isEqualTo((i % 2 == 0) ? "<tombstone>" : "value-" + i);
			this.cluster.client(3)
				.get()
				.uri("/v0/entity?id=" + key)
				.exchange()
				.expectStatus()
				.isEqualTo((i % 2 == 0) ? 404 : 200);
		}
	}

}
