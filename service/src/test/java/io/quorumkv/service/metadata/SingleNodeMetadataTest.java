package io.quorumkv.service.metadata;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.QuorumKvApplication;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.support.FreePorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A single node as the README starts it: no cluster secret, no peers. Its metadata
 * group's client reaches the group's leader, itself, through the internal API, so the
 * node's first ring goes into the log and no internal call of its own is refused. (It was
 * refused for want of a secret, every 12 s, and the ring never reached the log.)
 */
@SpringBootTest(classes = QuorumKvApplication.class, webEnvironment = WebEnvironment.DEFINED_PORT)
@DirtiesContext
class SingleNodeMetadataTest {

	@TempDir
	static Path data;

	/** A port of its own, as the README's node has: its own URL names it. */
	static final int PORT = FreePorts.take(1)[0];

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("quorumkv.storage.path", data::toString);
		registry.add("server.port", () -> PORT);
	}

	@Autowired
	MetadataGroup metadata;

	@Autowired
	ClusterState cluster;

	@Autowired
	MeterRegistry meters;

	@Test
	void theFirstRingReachesTheLogWithNoCallRefused() {
		Ring ring = this.cluster.ring().orElseThrow();
		eventually(Duration.ofSeconds(20), () -> {
			Optional<Ring> logged = this.metadata.read().block(Duration.ofSeconds(5));
			assertThat(logged).hasValueSatisfying((r) -> assertThat(r.epoch()).isEqualTo(ring.epoch()));
		});
		double refused = this.meters.find("quorumkv.internal.refused")
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
		assertThat(refused).isZero();
	}

}
