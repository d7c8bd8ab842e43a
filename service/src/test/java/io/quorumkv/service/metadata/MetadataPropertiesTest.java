package io.quorumkv.service.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** Binding of {@code quorumkv.metadata.*}: the production defaults, and validation. */
class MetadataPropertiesTest {

	private static MetadataProperties bind(Map<String, String> properties) {
		return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("quorumkv.metadata",
				MetadataProperties.class);
	}

	@Test
	void defaultsAreTheTimingOfSmallMachines() {
		assertThat(bind(Map.of()).timing()).isEqualTo(new MetadataTiming(Duration.ofMillis(1500),
				Duration.ofMillis(3000), Duration.ofSeconds(3), Duration.ofSeconds(15), 100));
	}

	@Test
	void shorterTimingsBind() {
		MetadataTiming timing = bind(Map.of("quorumkv.metadata.election-min", "300ms", "quorumkv.metadata.election-max",
				"600ms", "quorumkv.metadata.request-timeout", "1s", "quorumkv.metadata.proposal-timeout", "5s",
				"quorumkv.metadata.snapshot-every", "10"))
			.timing();
		assertThat(timing).isEqualTo(new MetadataTiming(Duration.ofMillis(300), Duration.ofMillis(600),
				Duration.ofSeconds(1), Duration.ofSeconds(5), 10));
	}

	@Test
	void badTimingsFailWithThePropertyName() {
		assertThatThrownBy(() -> bind(Map.of("quorumkv.metadata.election-min", "0s")))
			.hasRootCauseMessage("quorumkv.metadata.election-min must be positive");
		assertThatThrownBy(() -> bind(Map.of("quorumkv.metadata.election-min", "3s")))
			.hasRootCauseMessage("quorumkv.metadata.election-max must be longer than quorumkv.metadata.election-min");
		assertThatThrownBy(() -> bind(Map.of("quorumkv.metadata.request-timeout", "-1s")))
			.hasRootCauseMessage("quorumkv.metadata.request-timeout must be positive");
		assertThatThrownBy(() -> bind(Map.of("quorumkv.metadata.proposal-timeout", "2s"))).hasRootCauseMessage(
				"quorumkv.metadata.proposal-timeout must be at least quorumkv.metadata.request-timeout");
		assertThatThrownBy(() -> bind(Map.of("quorumkv.metadata.snapshot-every", "0")))
			.hasRootCauseMessage("quorumkv.metadata.snapshot-every must be at least 1");
	}

}
