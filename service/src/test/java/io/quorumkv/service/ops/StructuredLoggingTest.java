package io.quorumkv.service.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;

import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Nodes started with {@code logging.structured.format.console=ecs} log JSON, with the
 * start-up report, and never the cluster secret, whatever happens: replica calls, wrong
 * and missing secrets, a peer going down, hints, shutdown. With the default exposure the
 * admin endpoint is not reachable. A node listens on loopback by default and says at
 * start who may use its API.
 */
@ExtendWith(OutputCaptureExtension.class)
class StructuredLoggingTest {

	static final String SECRET = "Zq7-never-log-this-secret-3Kx";

	@TempDir
	Path data;

	@Test
	void logsJsonAndNeverTheSecret(CapturedOutput output) {
		try (TestCluster cluster = new TestCluster(this.data, 2, Map.of("quorumkv.cluster.secret", SECRET,
				"logging.structured.format.console", "ecs", "logging.level.io.quorumkv", "debug"))) {
			cluster.startAll();
			cluster.client(0)
				.put()
				.uri("/v0/entity?id=k&replicas=2/2")
				.bodyValue("v".getBytes())
				.exchange()
				.expectStatus()
				.isCreated();
			cluster.client(1)
				.get()
				.uri(InternalApi.ENTRIES_PATH + "?start=k")
				.header(InternalApi.SECRET, SECRET + "-wrong")
				.exchange()
				.expectStatus()
				.isForbidden();
			cluster.client(1)
				.get()
				.uri(InternalApi.ENTRIES_PATH + "?start=k")
				.exchange()
				.expectStatus()
				.isUnauthorized();
			// Not exposed by default: neither the view nor the actions.
			cluster.client(0).get().uri("/actuator/quorumkv").exchange().expectStatus().isNotFound();
			cluster.client(0).post().uri("/actuator/quorumkv/flush").exchange().expectStatus().isNotFound();
			cluster.client(0).get().uri("/actuator/env").exchange().expectStatus().isNotFound();
			cluster.stop(1);
			cluster.client(0)
				.put()
				.uri("/v0/entity?id=k2&replicas=1/2")
				.bodyValue("v".getBytes())
				.exchange()
				.expectStatus()
				.isCreated();
			cluster.client(0).get().uri("/v0/entity?id=k2&replicas=2/2").exchange().expectStatus().isEqualTo(504);
		}
		assertThat(output.getOut()).contains("\"@timestamp\"")
			.contains("\"ecs\":{\"version\"")
			.containsPattern(
					"QuorumKV node http://127.0.0.1:\\d+ ready: ring qkv-[0-9a-f]{16} epoch 1 \\(RF 2, 2 nodes\\), "
							+ "placement rendezvous, backend lsm, data /[^\"]*, event loops \\d+\"")
			// Loopback by default, and the line that says who may use the API.
			.containsPattern("Public API open on 127\\.0\\.0\\.1 port \\d+ \\(this host only\\) "
					+ "over plain HTTP: anyone on this host may read, write and delete every key");
		assertThat(output.getAll()).doesNotContain(SECRET);
	}

}
