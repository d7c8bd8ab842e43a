package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.net.URI;

import org.junit.jupiter.api.Test;

class NodeTest {

	@Test
	void theIdIsTheCanonicalUrlComputedOnce() {
		Node node = Node.of("http://127.0.0.1:8081/some/path?q=1");
		assertThat(node.id()).isEqualTo("http://127.0.0.1:8081");
		assertThat(node.url()).isEqualTo(URI.create("http://127.0.0.1:8081"));
		assertThat(node.id()).as("no new string per call").isSameAs(node.id());
		assertThat(node).isEqualTo(Node.of("http://127.0.0.1:8081/")).hasToString("http://127.0.0.1:8081");
		assertThat(Node.of("http://[::1]:9000").id()).isEqualTo("http://[::1]:9000");
	}

	@Test
	void aUrlWithoutHostOrPortIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> Node.of("http://127.0.0.1"));
		assertThatIllegalArgumentException().isThrownBy(() -> Node.of("127.0.0.1:8081/x"));
	}

}
