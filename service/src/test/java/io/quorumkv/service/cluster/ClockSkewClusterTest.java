package io.quorumkv.service.cluster;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.support.ShiftedClock;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Three nodes, node 2's wall clock an hour ahead (an injected clock): its timestamps are
 * refused by the correct nodes, never adopted, and cannot make their later writes lose.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClockSkewClusterTest {

	private static final long HOUR_MICROS = 3_600_000_000L;

	@TempDir
	static Path root;

	TestCluster cluster;

	/** One cluster for both tests: they write keys of their own and stop no node. */
	@BeforeAll
	void start() {
		this.cluster = new TestCluster(root, 3, Map.of("management.endpoints.web.exposure.include", "health"))
			.withClock(2, new ShiftedClock(Duration.ofHours(1)))
			.startAll();
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

	private double refused(int node) {
		return this.cluster.bean(node, MeterRegistry.class)
			.find("quorumkv.clock.refused")
			.counters()
			.stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	/** The hints a node dropped (0 before its first). */
	private double dropped(int node) {
		var counter = this.cluster.bean(node, MeterRegistry.class).find("quorumkv.hints.dropped").counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void aPeerAnHourAheadCannotMakeACorrectNodesLaterWritesLose() {
		// Counted from here: the other test's writes may have been refused and dropped.
		double refusedBefore = refused(0) + refused(1);
		double droppedBefore = dropped(2);
		// The skewed node's write reaches only itself: both peers refuse its timestamp.
		put(2, "k", "from-skewed", "2/3").expectStatus().isEqualTo(504);
		assertThat(this.cluster.localValue(2, "k")).isEqualTo("from-skewed");
		assertThat(this.cluster.localValue(0, "k")).isNull();
		assertThat(this.cluster.localValue(1, "k")).isNull();
		assertThat(refused(0) + refused(1)).isGreaterThanOrEqualTo(refusedBefore + 2);

		// A correct node's later write wins on the correct nodes, and reads through them.
		put(0, "k", "from-correct", "2/3").expectStatus().isCreated();
		for (int node = 0; node < 2; node++) {
			get(node, "k", "2/3").expectStatus().isOk().expectBody(String.class).isEqualTo("from-correct");
			assertThat(this.cluster.localValue(node, "k")).isEqualTo("from-correct");
			HybridLogicalClock clock = this.cluster.bean(node, HybridLogicalClock.class);
			assertThat(clock.last() - clock.wallMicros()).as("node %d's clock is not dragged ahead", node)
				.isLessThan(1_000_000);
		}
		// The skewed node's answer is refused: a read needing all three replicas cannot
		// be answered, and nothing of it is repaired onto the correct nodes.
		get(0, "k", "3/3").expectStatus().isEqualTo(504);
		// Its hints are refused too, and dropped rather than delivered an hour later.
		eventually(Duration.ofSeconds(20), () -> assertThat(dropped(2)).isGreaterThanOrEqualTo(droppedBefore + 2));
		for (int node = 0; node < 2; node++) {
			assertThat(this.cluster.localValue(node, "k")).isEqualTo("from-correct");
			assertThat(this.cluster.localTimestamp(node, "k"))
				.isLessThan(this.cluster.bean(0, HybridLogicalClock.class).wallMicros() + 1_000_000);
		}
	}

	@Test
	void eachNodeMeasuresThePeersOffsetAndHealthWarns() {
		put(0, "a", "1", "3/3").expectStatus().isCreated();
		put(2, "b", "1", "1/3").expectStatus().isCreated();
		eventually(Duration.ofSeconds(20), () -> {
			put(0, "a", "1", "3/3").expectStatus().isCreated();
			PeerClocks.Offset skewed = this.cluster.bean(0, PeerClocks.class).offset(this.cluster.url(2)).orElseThrow();
			assertThat(skewed.offsetMicros()).isBetween(HOUR_MICROS - 5_000_000, HOUR_MICROS + 5_000_000);
			PeerClocks.Offset correct = this.cluster.bean(0, PeerClocks.class)
				.offset(this.cluster.url(1))
				.orElseThrow();
			assertThat(Math.abs(correct.offsetMicros())).isLessThan(2_000_000);
		});
		this.cluster.adminClient(0)
			.get()
			.uri(this.cluster.uri(0, "/actuator/health"))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.status")
			.isEqualTo("WARNING")
			.jsonPath("$.components.clock.status")
			.isEqualTo("WARNING");
		assertThat(this.cluster.bean(0, MeterRegistry.class)
			.get("quorumkv.clock.offset")
			.tag("peer", this.cluster.url(2))
			.gauge()
			.value()).isBetween(3595.0, 3605.0);
	}

}
