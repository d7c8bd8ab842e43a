package io.quorumkv.service.support;

import java.nio.file.Path;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A two-node topology for single-context tests: this node and a peer that never answers
 * (nothing listens on its port). The node's own name is only a name: the server itself
 * listens on a random port.
 */
public final class DownPeerTopology {

	private static final int[] PORTS = FreePorts.take(2);

	/** This node's name in the topology. */
	public static final String SELF = "http://127.0.0.1:" + PORTS[0];

	/** A peer that never answers. */
	public static final String DEAD = "http://127.0.0.1:" + PORTS[1];

	private DownPeerTopology() {
	}

	/** Registers the topology and a data folder under {@code data}. */
	public static void register(DynamicPropertyRegistry registry, Path data) {
		registry.add("quorumkv.storage.path", () -> data.resolve("node").toString());
		registry.add("quorumkv.cluster.nodes", () -> SELF + "," + DEAD);
		registry.add("quorumkv.cluster.self", () -> SELF);
	}

}
