package io.quorumkv.service.cluster;

import java.util.List;
import java.util.Map;

import io.quorumkv.service.cluster.ClusterProperties.PlacementSetting;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class PlacementStrategyTests {

	@Test
	void createsTheNamedAlgorithm() {
		List<Node> nodes = PlacementContractTests.nodes(3);
		assertThat(PlacementStrategy.RENDEZVOUS.create(nodes)).isInstanceOf(RendezvousPlacement.class);
		assertThat(PlacementStrategy.CONSISTENT_HASH.create(nodes)).isInstanceOf(ConsistentHashPlacement.class)
			.extracting((p) -> ((ConsistentHashPlacement) p).virtualNodes())
			.isEqualTo(PlacementStrategy.DEFAULT_VIRTUAL_NODES);
		assertThat(PlacementStrategy.CONSISTENT_HASH.create(nodes, 16))
			.extracting((p) -> ((ConsistentHashPlacement) p).virtualNodes())
			.isEqualTo(16);
	}

	@ParameterizedTest
	@EnumSource(PlacementStrategy.class)
	void checksTheVirtualNodeCountWhateverTheStrategy(PlacementStrategy strategy) {
		List<Node> nodes = PlacementContractTests.nodes(3);
		assertThatIllegalArgumentException().isThrownBy(() -> strategy.create(nodes, 0))
			.withMessageContaining("virtual nodes per node");
		assertThatIllegalArgumentException().isThrownBy(() -> strategy.create(List.of()))
			.withMessageContaining("at least one node");
	}

	@ParameterizedTest
	@CsvSource({ "rendezvous, RENDEZVOUS", "consistent-hash, CONSISTENT_HASH", "CONSISTENT_HASH, CONSISTENT_HASH" })
	void bindsFromThePropertyValues(String value, PlacementStrategy expected) {
		Binder binder = new Binder(new MapConfigurationPropertySource(Map.of("quorumkv.cluster.placement", value)));
		assertThat(PlacementStrategy.of(binder.bind("quorumkv.cluster.placement", PlacementSetting.class).get()))
			.isEqualTo(expected);
	}

}
