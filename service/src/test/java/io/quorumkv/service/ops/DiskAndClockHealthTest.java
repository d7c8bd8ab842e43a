package io.quorumkv.service.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.QuorumKvApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.micrometer.metrics.test.autoconfigure.AutoConfigureMetrics;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The admin view's numbers on a fresh node: the clock's health before the first write,
 * and the disk checks watching the data folder rather than the working directory.
 */
@SpringBootTest(classes = QuorumKvApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureMetrics
@DirtiesContext
class DiskAndClockHealthTest {

	@TempDir
	static Path data;

	@DynamicPropertySource
	static void storage(DynamicPropertyRegistry registry) {
		registry.add("quorumkv.storage.path", () -> data.resolve("node").toString());
	}

	@Autowired
	ClockHealthIndicator clock;

	@Autowired
	ApplicationContext context;

	@Autowired
	MeterRegistry meters;

	@Test
	void theClocksHealthIsMeaningfulBeforeTheFirstWrite() {
		Health health = this.clock.health().block(java.time.Duration.ofSeconds(10));
		assertThat(health).isNotNull();
		Map<String, Object> details = health.getDetails();
		assertThat((Long) details.get("aheadOfWallMs")).isBetween(0L, (Long) details.get("maxClockSkewMs"));
		assertThat(details.get("lastStamp")).isEqualTo("none yet");
	}

	@Test
	void diskSpaceAndDiskFreeWatchTheDataFolder() {
		String folder = data.resolve("node").toString();
		HealthIndicator disk = this.context.getBean("diskSpaceHealthIndicator", HealthIndicator.class);
		Health health = disk.health();
		assertThat(String.valueOf(health.getDetails().get("path")))
			.endsWith(data.resolve("node").getFileName().toString())
			.contains(data.getFileName().toString());
		assertThat(this.meters.find("disk.free").gauges()).isNotEmpty()
			.allSatisfy((gauge) -> assertThat(gauge.getId().getTag("path")).contains(folder));
	}

}
