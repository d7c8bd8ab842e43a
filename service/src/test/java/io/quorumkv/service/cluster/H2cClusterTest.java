package io.quorumkv.service.cluster;

import java.util.Map;

/** The whole cluster test with the calls between nodes over HTTP/2 cleartext. */
class H2cClusterTest extends ClusterTest {

	@Override
	Map<String, String> nodeProperties() {
		return Map.of("server.http2.enabled", "true", "quorumkv.cluster.peer-protocol", "h2c");
	}

}
