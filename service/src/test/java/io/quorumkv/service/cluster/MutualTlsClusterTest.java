package io.quorumkv.service.cluster;

import java.nio.file.Path;

import io.quorumkv.service.support.TestTls;

/**
 * Every test of {@link ClusterTest} on three nodes that talk TLS to clients and to each
 * other, proving themselves to each other with their certificates alone: no node has a
 * cluster secret.
 */
class MutualTlsClusterTest extends ClusterTest {

	@Override
	TestTls tls(Path folder) {
		return TestTls.create(folder, true);
	}

}
