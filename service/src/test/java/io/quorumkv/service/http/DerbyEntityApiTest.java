package io.quorumkv.service.http;

import io.quorumkv.service.support.TestClients;

import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The whole public API on a node whose storage is Derby (without an fsync per commit, so
 * that the 20,000-key range test stays quick; durability is the crash kit's concern).
 */
@TestPropertySource(properties = { "quorumkv.storage.backend=derby", "quorumkv.storage.derby.durability=no-sync" })
class DerbyEntityApiTest extends EntityApiTest {

	/**
	 * Fresh connections: the same assertions as on the LSM node, without the keep-alive
	 * race after a refused PUT that {@link EntityApiTest} on the LSM node still
	 * exercises.
	 */
	@Override
	protected WebTestClient newClient(int port) {
		return TestClients.forPortWithoutKeepAlive(port);
	}

}
