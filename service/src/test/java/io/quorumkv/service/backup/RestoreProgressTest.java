package io.quorumkv.service.backup;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A restore's progress in the node's status ({@code qkv status}) and JSON view while it
 * runs, and how it ended once it is done: a node's own snapshot of 300 keys restored at
 * 100 entries a second.
 */
class RestoreProgressTest {

	private static final int KEYS = 300;

	@TempDir
	Path root;

	@Test
	void aRestoreShowsHowFarItHasComeWhileItRunsAndHowItEnded() throws Exception {
		try (TestCluster cluster = new TestCluster(this.root, 1,
				Map.of("management.endpoints.web.exposure.include", "health,quorumkv"))) {
			cluster.start(0);
			cluster.putKeys(KEYS, 0);
			WebTestClient admin = cluster.adminClient(0).mutate().responseTimeout(Duration.ofSeconds(60)).build();
			TestCluster.body(admin.post()
				.uri("/actuator/quorumkv/snapshot")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"name\":\"s1\"}"), 200);
			assertThat(status(admin)).doesNotContain("restore of");
			String snapshot = this.root.resolve("node0/snapshots/s1").toString();

			CompletableFuture<String> restore = CompletableFuture.supplyAsync(() -> TestCluster.body(admin.post()
				.uri("/actuator/quorumkv/restore")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"path\":\"" + snapshot + "\",\"rate\":100}"), 200));
			eventually(Duration.ofSeconds(10), () -> assertThat(status(admin)).contains("restore of " + snapshot)
				.containsPattern(": running, \\d+ keys read, [1-9]\\d* written"));

			assertThat(restore.get(60, TimeUnit.SECONDS)).contains("\"written\":" + KEYS);
			assertThat(status(admin)).contains(": done, " + KEYS + " keys read, " + KEYS + " written (0 tombstones)");
			assertThat(TestCluster.body(admin.get().uri("/actuator/quorumkv"), 200))
				.contains("\"restore\":{\"state\":\"done\"");
		}
	}

	private static String status(WebTestClient admin) {
		return TestCluster.body(admin.get().uri("/actuator/quorumkv/status").accept(MediaType.TEXT_PLAIN), 200);
	}

}
