package io.quorumkv.service.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** Binding of {@code quorumkv.http.*}: defaults and validation. */
class HttpPropertiesTest {

	private static HttpProperties bind(Map<String, String> properties) {
		return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("quorumkv.http",
				HttpProperties.class);
	}

	@Test
	void defaults() {
		HttpProperties http = bind(Map.of());
		assertThat(http.maxKeySize().toBytes()).isEqualTo(1024);
		assertThat(http.readTimeout()).isEqualTo(Duration.ofSeconds(30));
		assertThat(http.idleTimeout()).isEqualTo(Duration.ofSeconds(60));
	}

	@Test
	void badLimitsFailWithThePropertyName() {
		assertThatThrownBy(() -> bind(Map.of("quorumkv.http.max-in-flight", "0")))
			.hasRootCauseMessage("quorumkv.http.max-in-flight must be at least 1");
		assertThatThrownBy(() -> bind(Map.of("quorumkv.http.read-timeout", "0s")))
			.hasRootCauseMessage("quorumkv.http.read-timeout must be positive");
		assertThatThrownBy(() -> bind(Map.of("quorumkv.http.idle-timeout", "-1s")))
			.hasRootCauseMessage("quorumkv.http.idle-timeout must be positive");
	}

}
