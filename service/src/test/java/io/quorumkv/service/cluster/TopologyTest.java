package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.net.URI;
import java.util.List;

import org.junit.jupiter.api.Test;

class TopologyTest {

	private static final List<URI> THREE = List.of(URI.create("http://127.0.0.1:8081"),
			URI.create("http://127.0.0.1:8082"), URI.create("http://127.0.0.1:8083"));

	@Test
	void singleNodeNeedsNothing() {
		Topology topology = Topology.of(List.of(), null, null, 8080);
		assertThat(topology.size()).isEqualTo(1);
		assertThat(topology.self()).isEqualTo(Node.of("http://127.0.0.1:8080"));
		assertThat(topology.peers()).isEmpty();
	}

	@Test
	void clusterKnowsItsPeers() {
		Topology topology = Topology.of(THREE, URI.create("http://127.0.0.1:8082"), "s", 8082);
		assertThat(topology.peers()).extracting(Node::id)
			.containsExactly("http://127.0.0.1:8081", "http://127.0.0.1:8083");
		assertThat(topology.toString()).doesNotContain("s]").contains("(set)");
	}

	@Test
	void aNodeOutsideTheSeedsIsANewcomer() {
		assertThat(Topology.of(THREE, URI.create("http://127.0.0.1:9999"), "s", 9999).seeded()).isFalse();
		assertThat(Topology.of(THREE, URI.create("http://127.0.0.1:8083"), "s", 8083).seeded()).isTrue();
	}

	@Test
	void duplicatesAreRefused() {
		List<URI> twice = List.of(URI.create("http://127.0.0.1:8081"), URI.create("http://127.0.0.1:8081/"));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Topology.of(twice, URI.create("http://127.0.0.1:8081"), "s", 8081))
			.withMessageContaining("more than once");
	}

	@Test
	void clusterNeedsASecret() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Topology.of(THREE, URI.create("http://127.0.0.1:8081"), null, 8081))
			.withMessageContaining("quorumkv.cluster.secret");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Topology.of(THREE, URI.create("http://127.0.0.1:8081"), " ", 8081));
	}

	@Test
	void replicationFactorDefaultsToTheClusterSizeAndIsChecked() {
		assertThat(Topology.of(THREE, URI.create("http://127.0.0.1:8081"), "s", 8081).replicationFactor()).isEqualTo(3);
		assertThat(Topology.of(THREE, URI.create("http://127.0.0.1:8081"), "s", 8081, 2).replicationFactor())
			.isEqualTo(2);
		for (int bad : new int[] { 0, 4 }) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> Topology.of(THREE, URI.create("http://127.0.0.1:8081"), "s", 8081, bad))
				.withMessageContaining("quorumkv.cluster.replication-factor must be between 1 and the 3 nodes");
		}
	}

	@Test
	void mutualTlsMakesTheSecretOptionalAndTlsNeedsHttpsUrls() {
		List<URI> https = THREE.stream().map((url) -> URI.create(url.toString().replace("http:", "https:"))).toList();
		Topology topology = Topology.of(https, URI.create("https://127.0.0.1:8081"), null, 8081, true, true);
		assertThat(topology.secret()).isNull();
		assertThat(topology.self().id()).isEqualTo("https://127.0.0.1:8081");
		assertThat(Topology.of(List.of(), null, null, 8443, true, false).self().id())
			.isEqualTo("https://127.0.0.1:8443");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Topology.of(https, URI.create("https://127.0.0.1:8081"), null, 8081, true, false))
			.withMessageContaining("quorumkv.cluster.secret");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Topology.of(THREE, URI.create("http://127.0.0.1:8081"), "s", 8081, true, true))
			.withMessageContaining("is not https://");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Topology.of(https, URI.create("https://127.0.0.1:8081"), "s", 8081))
			.withMessageContaining("quorumkv.cluster.tls.bundle");
	}

	@Test
	void urlsNeedSchemeHostAndPort() {
		assertThatIllegalArgumentException().isThrownBy(() -> Node.of("127.0.0.1:8081"));
		assertThatIllegalArgumentException().isThrownBy(() -> Node.of("http://127.0.0.1"));
	}

}
