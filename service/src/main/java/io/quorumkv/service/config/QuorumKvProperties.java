package io.quorumkv.service.config;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Every {@code quorumkv.*} setting of a node, validated when bound: a bad value stops the
 * start with a message naming the property.
 *
 * @param storage where and how the node keeps its data
 * @param cluster the nodes of the cluster and this node's place in it
 * @param http limits of the public API
 */
@ConfigurationProperties("quorumkv")
public record QuorumKvProperties(@DefaultValue StorageProperties storage, @DefaultValue ClusterProperties cluster,
		@DefaultValue HttpProperties http) {

	/**
	 * Storage settings.
	 *
	 * @param backend the storage engine: {@code lsm}, {@code h2} or {@code derby}
	 * @param path the node's data folder (created when missing)
	 */
	public record StorageProperties(@DefaultValue("h2") Backend backend, @DefaultValue("./data/node") Path path) {

		public StorageProperties {
			Objects.requireNonNull(backend, "quorumkv.storage.backend");
			Objects.requireNonNull(path, "quorumkv.storage.path");
		}

	}

	/** The storage engines a node can run on. */
	public enum Backend {

		/** QuorumKV's own log-structured merge tree. */
		LSM,
		/** H2 in file mode through R2DBC. */
		H2,
		/** Embedded Apache Derby through JDBC. */
		DERBY

	}

	/**
	 * Cluster settings.
	 *
	 * @param nodes base URLs of every node of the cluster, this one included; empty for a
	 * single node
	 * @param self this node's base URL as listed in {@code nodes}; defaults to
	 * {@code http://127.0.0.1:<server.port>}
	 * @param secret shared secret that nodes present to each other on the internal API;
	 * required when there is more than one node
	 * @param replicaTimeout how long the coordinator waits for replicas before answering
	 * 504
	 */
	public record ClusterProperties(@DefaultValue List<URI> nodes, @Nullable URI self, @Nullable String secret,
			@DefaultValue("2s") Duration replicaTimeout) {

		public ClusterProperties {
			nodes = List.copyOf(nodes);
			if (replicaTimeout.isNegative() || replicaTimeout.isZero()) {
				throw new IllegalArgumentException("quorumkv.cluster.replica-timeout must be positive");
			}
		}

		@Override
		public String toString() {
			// Never print the secret.
			return "ClusterProperties[nodes=" + this.nodes + ", self=" + this.self + ", secret="
					+ ((this.secret != null) ? "(set)" : "(none)") + ", replicaTimeout=" + this.replicaTimeout + "]";
		}

	}

	/**
	 * Limits of the public API; requests over them get a 4xx or a 503, never an
	 * out-of-memory error.
	 *
	 * @param maxBodySize largest accepted PUT body (413 above)
	 * @param maxKeySize largest accepted key in bytes after decoding (400 above)
	 * @param maxInFlight public requests served at once; more get 503 with Retry-After
	 */
	public record HttpProperties(@DefaultValue("4MB") DataSize maxBodySize, @DefaultValue("4KB") DataSize maxKeySize,
			@DefaultValue("1024") int maxInFlight) {

		public HttpProperties {
			if (maxBodySize.toBytes() < 1 || maxBodySize.toBytes() > Integer.MAX_VALUE - 64) {
				throw new IllegalArgumentException("quorumkv.http.max-body-size must be between 1B and 2GB");
			}
			if (maxKeySize.toBytes() < 1 || maxKeySize.toBytes() > 65_536) {
				throw new IllegalArgumentException("quorumkv.http.max-key-size must be between 1B and 64KB");
			}
			if (maxInFlight < 1) {
				throw new IllegalArgumentException("quorumkv.http.max-in-flight must be at least 1");
			}
		}

	}

}
