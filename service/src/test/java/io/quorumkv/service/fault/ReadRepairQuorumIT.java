package io.quorumkv.service.fault;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.Test;

/**
 * Read repair through a 2/3 read, whose quorum is reached before the stale replica
 * answers.
 */
class ReadRepairQuorumIT {

	@Test
	void aTwoOfThreeReadRepairsTheStaleThirdReplica() {
		Path root = FaultFolders.create("repair");
		try (TestCluster cluster = new TestCluster(root, 3, Map.of("quorumkv.cluster.hints.max-pending", "0"))
			.startAll()) {
			for (int i = 0; i < 20; i++) {
				cluster.client(0)
					.put()
					.uri(cluster.uri(0, "/v0/entity?id=r" + i + "&replicas=3/3"))
					.bodyValue("old")
					.exchange()
					.expectStatus()
					.isCreated();
			}
			cluster.stop(2);
			for (int i = 0; i < 20; i++) {
				cluster.client(0)
					.put()
					.uri(cluster.uri(0, "/v0/entity?id=r" + i + "&replicas=2/3"))
					.bodyValue("new")
					.exchange()
					.expectStatus()
					.isCreated();
			}
			cluster.start(2);
			for (int i = 0; i < 20; i++) {
				cluster.client(1)
					.get()
					.uri(cluster.uri(1, "/v0/entity?id=r" + i + "&replicas=2/3"))
					.exchange()
					.expectStatus()
					.isOk()
					.expectBody(String.class)
					.isEqualTo("new");
			}
			eventually(Duration.ofSeconds(10), () -> {
				for (int i = 0; i < 20; i++) {
					assertThat(cluster.localValue(2, "r" + i)).as("r" + i).isEqualTo("new");
				}
			});
		}
		finally {
			FaultFolders.delete(root);
		}
	}

}
