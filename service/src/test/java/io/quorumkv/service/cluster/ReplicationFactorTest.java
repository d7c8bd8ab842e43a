package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import io.quorumkv.service.storage.ChecksummedFile;
import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three real nodes with a replication factor of 2: each key lives on exactly two nodes
 * (sharding), {@code from} defaults to 2 and may not exceed it, and every node keeps a
 * stable id in its data folder.
 */
class ReplicationFactorTest {

	@TempDir
	static Path root;

	static TestCluster cluster;

	@BeforeAll
	static void start() {
		cluster = new TestCluster(root, 3, Map.of("quorumkv.cluster.replication-factor", "2")).startAll();
	}

	@AfterAll
	static void stop() {
		cluster.close();
	}

	@Test
	void everyKeyLivesOnExactlyTheReplicationFactorOfNodes() {
		int[] held = new int[3];
		for (int i = 0; i < 90; i++) {
			String key = "rf-" + i;
			int writer = i % 3;
			cluster.client(writer)
				.put()
				.uri(cluster.uri(writer, "/v0/entity?id=" + key))
				.bodyValue(("v" + i).getBytes(StandardCharsets.UTF_8))
				.exchange()
				.expectStatus()
				.isCreated();
			int copies = 0;
			for (int node = 0; node < 3; node++) {
				if (cluster.localValue(node, key) != null) {
					copies++;
					held[node]++;
				}
			}
			// The default is 2/2: both replicas confirmed before the answer.
			assertThat(copies).as("copies of %s", key).isEqualTo(2);
			cluster.client((writer + 1) % 3)
				.get()
				.uri(cluster.uri((writer + 1) % 3, "/v0/entity?id=" + key + "&replicas=1/2"))
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody(String.class)
				.isEqualTo("v" + i);
		}
		// 90 keys * 2 copies over 3 nodes: about 60 each; every node holds some, none
		// all.
		assertThat(java.util.Arrays.stream(held).boxed().toList())
			.allSatisfy((count) -> assertThat(count).isBetween(30, 89));
	}

	@Test
	void fromAboveTheReplicationFactorIsABadRequestNamingIt() {
		cluster.client(0)
			.get()
			.uri(cluster.uri(0, "/v0/entity?id=k&replicas=2/3"))
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("exceeds the replication factor (2)"));
		cluster.client(0)
			.put()
			.uri(cluster.uri(0, "/v0/entity?id=k&from=3"))
			.bodyValue(new byte[] { 1 })
			.exchange()
			.expectStatus()
			.isBadRequest();
	}

	@Test
	void eachNodeKeepsItsIdInItsDataFolder() throws Exception {
		for (int node = 0; node < 3; node++) {
			Path file = root.resolve("node" + node).resolve(NodeIdentity.FILE);
			assertThat(ByteBuffer.wrap(Files.readAllBytes(file)).getInt()).isEqualTo(NodeIdentity.MAGIC);
			assertThat(ChecksummedFile.text(file, NodeIdentity.MAGIC, "qkv-node-id").readText())
				.isEqualTo(cluster.url(node));
		}
	}

}
