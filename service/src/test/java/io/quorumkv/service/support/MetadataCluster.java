package io.quorumkv.service.support;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.metadata.MetadataGroup;

import org.springframework.http.MediaType;

/**
 * Real nodes in this JVM ({@link TestCluster}) seen through their metadata group: each
 * node's group, ring and id, the group's leader, and the operator's membership actions
 * ({@code /actuator/quorumkv/<action>}). The set-up the metadata and membership tests
 * share; close it to stop every node.
 */
public final class MetadataCluster implements AutoCloseable {

	/** How long a test waits for the group: an election, a change applied everywhere. */
	public static final Duration PATIENCE = Duration.ofSeconds(30);

	private final TestCluster nodes;

	private MetadataCluster(TestCluster nodes) {
		this.nodes = nodes;
	}

	/**
	 * Settings of a cluster whose operator actions the tests call: replication factor 2,
	 * the {@code quorumkv} actuator endpoint exposed.
	 */
	public static Map<String, String> operated(Map<String, String> extra) {
		Map<String, String> properties = new HashMap<>();
		properties.put("quorumkv.cluster.replication-factor", "2");
		properties.put("management.endpoints.web.exposure.include", "health,quorumkv");
		properties.putAll(extra);
		return properties;
	}

	/** A cluster of {@code size} nodes with {@code properties}; no node started yet. */
	public static MetadataCluster create(Path root, int size, Map<String, String> properties) {
		return new MetadataCluster(new TestCluster(root, size, properties));
	}

	/** The nodes themselves: start, stop, clients, beans. */
	public TestCluster nodes() {
		return this.nodes;
	}

	public MetadataGroup group(int node) {
		return this.nodes.bean(node, MetadataGroup.class);
	}

	public Ring ring(int node) {
		return this.nodes.bean(node, ClusterState.class).ring().orElseThrow();
	}

	public String id(int node) {
		return this.nodes.bean(node, ClusterState.class).self().id();
	}

	/** Waits until exactly one of {@code among} leads the group; that node. */
	public int leader(List<Integer> among) {
		int[] leader = new int[1];
		eventually(PATIENCE, () -> {
			List<Integer> leaders = among.stream().filter((node) -> group(node).leads()).toList();
			assertThat(leaders).as("the leaders among %s", among).hasSize(1);
			leader[0] = leaders.getFirst();
		});
		return leader[0];
	}

	/** An operator's action asked of one node: {@code "<status> <body>"}. */
	public String answer(int node, String action, String json) {
		var result = this.nodes.adminClient(node)
			.post()
			.uri("/actuator/quorumkv/" + action)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(json)
			.exchange()
			.expectBody(String.class)
			.returnResult();
		return result.getStatus().value() + " " + result.getResponseBody();
	}

	/** {@link #answer}, which must have {@code status}. */
	public String admin(int node, String action, String json, int status) {
		String answer = answer(node, action, json);
		assertThat(answer).startsWith(status + " ");
		return answer;
	}

	@Override
	public void close() {
		this.nodes.close();
	}

}
