package io.quorumkv.service.cluster;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.replication.HintStore;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hinted handoff on the SQL backends, three in-JVM nodes: a key of the largest size the
 * API takes (1 KiB, Derby's own limit) that misses a replica keeps its hint and is
 * delivered, and delivered hints are dropped for good, so the hint store's size goes back
 * to nothing after each outage instead of growing with every write the replica missed.
 */
class HintDeliveryBackendsTest {

	private static final int KEYS = 60;

	@TempDir
	Path root;

	@ParameterizedTest
	@ValueSource(strings = { "h2", "derby" })
	void everyMissedWriteIsDeliveredAndTheHintStoreEmptiesAfterEachOutage(String backend) {
		try (TestCluster cluster = new TestCluster(this.root.resolve(backend), 3, Map.of("quorumkv.storage.backend",
				backend, "quorumkv.storage.derby.durability", "no-sync", "quorumkv.http.max-key-size", "1KB"))
			.startAll()) {
			String longKey = "L".repeat(1023) + "Z";
			for (int round = 0; round < 2; round++) {
				cluster.stop(2);
				String prefix = "r" + round + "-";
				put(cluster, longKey, "long-" + round);
				for (int i = 0; i < KEYS; i++) {
					put(cluster, prefix + i, "v" + i);
				}
				for (int i = 0; i < KEYS; i += 2) {
					cluster.client(0)
						.delete()
						.uri(cluster.uri(0, "/v0/entity?id=" + prefix + i + "&replicas=2/3"))
						.exchange()
						.expectStatus()
						.isAccepted();
				}
				HintStore hints = cluster.bean(0, HintStore.class);
				assertThat(hints.footprint().block(Duration.ofSeconds(30))).isGreaterThanOrEqualTo(KEYS + 1);
				cluster.start(2);
				int r = round;
				eventually(Duration.ofSeconds(60), () -> {
					assertThat(cluster.localValue(2, longKey)).isEqualTo("long-" + r);
					for (int i = 0; i < KEYS; i++) {
						assertThat(cluster.localValue(2, prefix + i)).isEqualTo((i % 2 == 0) ? "<tombstone>" : "v" + i);
					}
					assertThat(hints.footprint().block(Duration.ofSeconds(30)))
						.as("entries left in node 0's hint store after delivery")
						.isZero();
				});
			}
			assertThat(cluster.bean(0, MeterRegistry.class).get("quorumkv.hints.dropped").counter().count()).isZero();
			assertThat(cluster.bean(0, MeterRegistry.class).get("quorumkv.hints.delivered").counter().count())
				.isGreaterThanOrEqualTo(2 * (KEYS + 1));
		}
	}

	private static void put(TestCluster cluster, String key, String value) {
		cluster.client(0)
			.put()
			.uri(cluster.uri(0,
					"/v0/entity?id=" + InternalApi.encodeKey(key.getBytes(StandardCharsets.UTF_8)) + "&replicas=2/3"))
			.bodyValue(value.getBytes(StandardCharsets.UTF_8))
			.exchange()
			.expectStatus()
			.isCreated();
	}

}
