package io.quorumkv.service.cluster;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Placement is part of the on-disk contract: a node that answered differently after an
 * upgrade would look for keys where they are not. These answers are pinned; if this test
 * fails, the change moves data and needs a migration, not a new expected value.
 */
class PlacementPinnedTests {

	@Test
	void hashesKeysWithXxh3AsSpecified() {
		// XXH3_64bits of the empty input with seed 0, from the xxHash reference.
		assertThat(PlacementSupport.keyHash(new byte[0])).isEqualTo(0x2d06800538d394c2L);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			RENDEZVOUS      | ''         | 8085,8081,8082
			RENDEZVOUS      | alpha      | 8082,8084,8081
			RENDEZVOUS      | key-0      | 8084,8081,8082
			RENDEZVOUS      | key-999999 | 8082,8084,8083
			CONSISTENT_HASH | ''         | 8081,8084,8083
			CONSISTENT_HASH | alpha      | 8083,8081,8082
			CONSISTENT_HASH | key-0      | 8083,8081,8084
			CONSISTENT_HASH | key-999999 | 8085,8083,8081
			""")
	void answersThePinnedReplicas(PlacementStrategy strategy, String key, String ports) {
		Placement placement = strategy.create(PlacementContractTests.nodes(5));
		List<Integer> answered = placement.replicas(key.getBytes(StandardCharsets.UTF_8), 3)
			.stream()
			.map((node) -> node.url().getPort())
			.toList();
		assertThat(answered).map(String::valueOf).containsExactly(ports.split(","));
	}

}
