package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import io.quorumkv.service.cluster.ClusterProperties.PlacementSetting;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** Binding of {@code quorumkv.cluster.*}: defaults, kebab-case names, validation. */
class ClusterPropertiesTest {

	private static ClusterProperties bind(Map<String, String> properties) {
		return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("quorumkv.cluster",
				ClusterProperties.class);
	}

	@Test
	void defaultsAndKebabCaseNamesBind() {
		assertThat(bind(Map.of()).placement()).isEqualTo(PlacementSetting.RENDEZVOUS);
		ClusterProperties cluster = bind(Map.of("quorumkv.cluster.placement", "consistent-hash",
				"quorumkv.cluster.nodes", "http://127.0.0.1:1,http://127.0.0.1:2"));
		assertThat(cluster.placement()).isEqualTo(PlacementSetting.CONSISTENT_HASH);
		assertThat(cluster.nodes()).hasSize(2);
	}

	@Test
	void badValuesFailWithThePropertyName() {
		assertThatThrownBy(() -> bind(Map.of("quorumkv.cluster.replica-timeout", "0s")))
			.hasRootCauseMessage("quorumkv.cluster.replica-timeout must be positive");
	}

	@Test
	void secretIsNeverPrinted() {
		ClusterProperties cluster = bind(Map.of("quorumkv.cluster.secret", "hunter2"));
		assertThat(cluster.toString()).doesNotContain("hunter2");
	}

}
