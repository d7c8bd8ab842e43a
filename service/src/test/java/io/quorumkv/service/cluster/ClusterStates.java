package io.quorumkv.service.cluster;

import java.nio.file.Path;
import java.time.Duration;

/** Cluster states for tests outside this package, without a Spring context. */
public final class ClusterStates {

	private ClusterStates() {
	}

	/**
	 * The state of node {@code self} holding {@code ring}, its ring file in
	 * {@code folder}; the caller closes it.
	 */
	public static ClusterState of(Node self, Ring ring, Path folder) {
		return new ClusterState(self, new RingFile(folder), ring, Duration.ofSeconds(1), true);
	}

	/**
	 * Gives the node whose data folder is {@code folder} the id {@code id} before its
	 * first start, as {@link NodeIdentity} keeps it there.
	 */
	public static void writeNodeId(Path folder, String id) {
		NodeIdentity.replace(folder, id);
	}

}
