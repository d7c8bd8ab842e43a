package io.quorumkv.service.config;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import io.quorumkv.storage.derby.DerbyStorageOptions;
import io.quorumkv.storage.h2.H2Durability;
import io.quorumkv.storage.h2.H2StorageOptions;
import io.quorumkv.storage.lsm.Compression;
import io.quorumkv.storage.lsm.FsyncPolicy;
import io.quorumkv.storage.lsm.LsmOptions;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The {@code quorumkv.*} settings several packages read (the storage, the cluster, the
 * public API's limits), validated when bound: a bad value stops the start with a message
 * naming the property. A setting of one concern lives with its package and binds there:
 * {@code quorumkv.repair} ({@code repair.RepairProperties}),
 * {@code quorumkv.cluster.membership} ({@code membership.MembershipProperties}),
 * {@code quorumkv.cluster.hints} and {@code .scan} ({@code replication}),
 * {@code quorumkv.cluster.breaker} and {@code .stream} ({@code peer}),
 * {@code quorumkv.security} and {@code quorumkv.watchdog}.
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
	 * @param path the node's data folder (created when missing): data under
	 * {@code data/}, hints under {@code hints/}
	 * @param lsm settings of the {@code lsm} backend
	 * @param h2 settings of the {@code h2} backend
	 * @param derby settings of the {@code derby} backend
	 * @param tombstoneGracePeriod a tombstone is purged only once older than this and
	 * after a repair of its range that started after it was written (every backend);
	 * longer than a replica may stay down and than the repair interval
	 * @param purgeInterval how often the backend is asked to drop the tombstones it may
	 * (H2 and Derby; the LSM drops them in its compactions)
	 */
	public record StorageProperties(@DefaultValue("lsm") Backend backend, @DefaultValue("./data/node") Path path,
			@DefaultValue LsmProperties lsm, @DefaultValue H2Properties h2, @DefaultValue DerbyProperties derby,
			@DefaultValue("10d") Duration tombstoneGracePeriod, @DefaultValue("1h") Duration purgeInterval) {

		public StorageProperties {
			Objects.requireNonNull(backend, "quorumkv.storage.backend");
			Objects.requireNonNull(path, "quorumkv.storage.path");
			if (tombstoneGracePeriod.isNegative()) {
				throw new IllegalArgumentException("quorumkv.storage.tombstone-grace-period must not be negative");
			}
			if (purgeInterval.isNegative() || purgeInterval.isZero()) {
				throw new IllegalArgumentException("quorumkv.storage.purge-interval must be positive");
			}
			if (backend != Backend.LSM && lsm.incrementalBackups()) {
				throw new IllegalArgumentException(
						"quorumkv.storage.lsm.incremental-backups is for the lsm backend: the "
								+ backend.name().toLowerCase(java.util.Locale.ROOT)
								+ " backend keeps no tables to link; " + "take snapshots instead (docs/backup.md)");
			}
		}

	}

	/**
	 * The LSM backend (see docs/storage-lsm.md); defaults equal
	 * {@code LsmOptions.defaults}.
	 *
	 * @param memtableSize bytes a memtable holds before it is flushed to an SSTable
	 * @param blockSize target size of an SSTable data block
	 * @param bloomBitsPerKey bloom filter bits per key (10: about 1% false positives)
	 * @param fsync when the write-ahead log is forced to disk: {@code always},
	 * {@code interval} or {@code never}
	 * @param fsyncInterval the period of {@code interval}
	 * @param level0CompactionTrigger level-0 tables that start a compaction
	 * @param levelBaseSize target size of level 1
	 * @param levelSizeMultiplier growth of each level's target over the previous one
	 * @param targetTableSize compaction output tables are cut at about this size
	 * @param maxLevels levels including level 0
	 * @param tombstoneGracePeriod the LSM engine's own floor: a compaction purges no
	 * tombstone younger than this, whatever the node allows; the node's rule (a grace
	 * period and a repair) is quorumkv.storage.tombstone-grace-period
	 * @param maxImmutableMemtables memtables waiting for their flush before writers stall
	 * @param maxStall longest stall of a write before it fails with a 503
	 * @param compression how the data blocks of new tables are compressed: {@code lz4}
	 * (the default; the block cache keeps blocks decompressed), {@code none} or
	 * {@code zstd} (less disk, slower reads); each table records its own, so a change
	 * needs no rewrite (compactions rewrite tables under the new setting)
	 * @param blockCache bytes of decompressed data blocks kept in native memory, off the
	 * Java heap (default: a quarter of the maximum heap, at most 512 MB); {@code 0} turns
	 * the cache off
	 * @param incrementalBackups hard-link every table a flush writes into
	 * {@code <data>/backups/} with a checksum record, so that a snapshot plus the tables
	 * flushed since restores to a later time (docs/backup.md, "Incremental backups");
	 * compactions link nothing. LSM only: a node on another backend refuses to start with
	 * it
	 */
	public record LsmProperties(@DefaultValue("64MB") DataSize memtableSize, @DefaultValue("4KB") DataSize blockSize,
			@DefaultValue("10") int bloomBitsPerKey, @DefaultValue("interval") FsyncPolicy fsync,
			@DefaultValue("100ms") Duration fsyncInterval, @DefaultValue("4") int level0CompactionTrigger,
			@DefaultValue("256MB") DataSize levelBaseSize, @DefaultValue("10") int levelSizeMultiplier,
			@DefaultValue("64MB") DataSize targetTableSize, @DefaultValue("7") int maxLevels,
			@DefaultValue("0s") Duration tombstoneGracePeriod, @DefaultValue("2") int maxImmutableMemtables,
			@DefaultValue("10s") Duration maxStall, @DefaultValue("lz4") Compression compression,
			@Nullable DataSize blockCache, @DefaultValue("false") boolean incrementalBackups) {

		/** The backend's options for a folder. */
		public LsmOptions toOptions(Path directory) {
			return new LsmOptions(directory, this.memtableSize.toBytes(), (int) this.blockSize.toBytes(),
					this.bloomBitsPerKey, this.fsync, this.fsyncInterval, this.level0CompactionTrigger,
					this.levelBaseSize.toBytes(), this.levelSizeMultiplier, this.targetTableSize.toBytes(),
					this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables, this.maxStall,
					this.compression,
					(this.blockCache != null) ? this.blockCache.toBytes() : LsmOptions.defaultBlockCacheSize(),
					this.incrementalBackups);
		}

	}

	/**
	 * The Derby backend (see docs/storage-derby.md); defaults equal
	 * {@code DerbyStorageOptions.defaults}.
	 *
	 * @param poolSize JDBC connections, and threads running them
	 * @param maxQueuedTasks JDBC tasks waiting for a thread; more get 503
	 * @param acquireTimeout longest wait for a pooled connection
	 * @param durability {@code sync-on-commit} (fsync per commit) or {@code no-sync}
	 * @param pageCacheSize pages in Derby's page cache
	 * @param scanBatchSize rows read per range-scan page
	 */
	public record DerbyProperties(@DefaultValue("8") int poolSize, @DefaultValue("1024") int maxQueuedTasks,
			@DefaultValue("5s") Duration acquireTimeout,
			@DefaultValue("sync-on-commit") DerbyStorageOptions.Durability durability,
			@DefaultValue("1000") int pageCacheSize, @DefaultValue("500") int scanBatchSize) {

		/** The backend's options for a folder. */
		public DerbyStorageOptions toOptions(Path directory) {
			return new DerbyStorageOptions(directory, this.poolSize, this.maxQueuedTasks, this.acquireTimeout,
					this.durability, this.pageCacheSize, this.scanBatchSize);
		}

	}

	/**
	 * The H2 backend (see docs/storage-h2.md); defaults equal
	 * {@code H2StorageOptions.defaults}.
	 *
	 * @param poolInitialSize connections opened at start
	 * @param poolMaxSize the most connections, and so statements running at once
	 * @param maxPendingAcquires callers that may wait for a connection; more get 503
	 * @param acquireTimeout longest wait for a connection before a 503
	 * @param durability when an acknowledged write reaches the disk:
	 * {@code sync-each-write}, {@code write-each-commit} or {@code periodic-sync}
	 * @param syncInterval fsync period of {@code write-each-commit} and
	 * {@code periodic-sync}
	 * @param scanPageSize rows per query of a range scan
	 * @param lockTimeout how long a statement waits for a row lock
	 * @param cacheSizeMb H2's page cache in MiB
	 * @param maxUpsertRetries retries of an upsert after a conflict with a concurrent one
	 */
	public record H2Properties(@DefaultValue("2") int poolInitialSize, @DefaultValue("8") int poolMaxSize,
			@DefaultValue("256") int maxPendingAcquires, @DefaultValue("5s") Duration acquireTimeout,
			@DefaultValue("write-each-commit") H2Durability durability, @DefaultValue("100ms") Duration syncInterval,
			@DefaultValue("256") int scanPageSize, @DefaultValue("10s") Duration lockTimeout,
			@DefaultValue("64") int cacheSizeMb, @DefaultValue("16") int maxUpsertRetries) {

		/** The backend's options for a folder. */
		public H2StorageOptions toOptions(Path directory) {
			return new H2StorageOptions(directory, this.poolInitialSize, this.poolMaxSize, this.maxPendingAcquires,
					this.acquireTimeout, this.durability, this.syncInterval, this.scanPageSize, this.lockTimeout,
					this.cacheSizeMb, this.maxUpsertRetries);
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
	 * @param nodes base URLs of the nodes a cluster starts with (its seeds), this one
	 * included unless it is a newcomer to be joined; empty for a single node. Read on a
	 * node's first start only: then the ring in its data folder counts
	 * @param self this node's base URL as listed in {@code nodes}; defaults to
	 * {@code http://127.0.0.1:<server.port>}
	 * @param secret shared secret that nodes present to each other on the internal API;
	 * required when there is more than one node
	 * @param replicaTimeout how long the coordinator waits for a replica before counting
	 * it as failed (504 when too few answered)
	 * @param connectTimeout TCP connect timeout to a peer
	 * @param maxConnectionsPerPeer pooled keep-alive connections to each peer, shared by
	 * every call to it (a replica stream holds one per event loop; scans, repair and ring
	 * calls take one for a call)
	 * @param maxPendingPerPeer requests waiting for a pooled connection, per peer; more
	 * fail at once
	 * @param maxConcurrentCallsPerPeer replica operations in flight on one stream to a
	 * peer (one per event loop); more fail at once
	 * @param maxConcurrentRepairs read repairs in flight; more are skipped and counted
	 * @param placement how keys are placed on nodes: {@code rendezvous} or
	 * {@code consistent-hash}
	 * @param virtualNodes virtual nodes per node for {@code consistent-hash}
	 * @param replicationFactor how many nodes hold each key (the first of its placement
	 * order), 1 up to the number of nodes; by default every node; the default and the
	 * largest {@code from} of a request. Like {@code nodes}, it seeds the ring of a
	 * cluster's first start only
	 * @param id the cluster's id, which a node of another cluster does not share; by
	 * default derived from {@code nodes}
	 * @param tls TLS of the calls to the peers
	 * @param maxClockSkew a timestamp from another node (a replica write, a batch, a
	 * hint, a read answer, a repair stream) further ahead of this node's wall clock than
	 * this is refused and never adopted
	 * @param clockReservation the clock's high-water mark is written to the data folder
	 * ahead of the stamps by this much, about once per this much progress; a restart
	 * never stamps below an earlier write
	 * @param clockOffsetWarning health warns (status WARNING) when a peer's measured
	 * clock offset exceeds this; less than max-clock-skew
	 */
	public record ClusterProperties(@DefaultValue List<URI> nodes, @Nullable URI self, @Nullable String secret,
			@DefaultValue("1s") Duration replicaTimeout, @DefaultValue("500ms") Duration connectTimeout,
			@DefaultValue("64") int maxConnectionsPerPeer, @DefaultValue("1024") int maxPendingPerPeer,
			@DefaultValue("512") int maxConcurrentCallsPerPeer, @DefaultValue("256") int maxConcurrentRepairs,
			@DefaultValue("rendezvous") PlacementSetting placement, @DefaultValue("128") int virtualNodes,
			@Nullable Integer replicationFactor, @Nullable String id, @DefaultValue TlsProperties tls,
			@DefaultValue("500ms") Duration maxClockSkew, @DefaultValue("1s") Duration clockReservation,
			@DefaultValue("250ms") Duration clockOffsetWarning) {

		public ClusterProperties {
			nodes = List.copyOf(nodes);
			if (replicationFactor != null && replicationFactor < 1) {
				throw new IllegalArgumentException("quorumkv.cluster.replication-factor must be at least 1");
			}
			positive(replicaTimeout, "replica-timeout");
			positive(connectTimeout, "connect-timeout");
			atLeastOne(maxConnectionsPerPeer, "max-connections-per-peer");
			atLeastOne(maxPendingPerPeer, "max-pending-per-peer");
			atLeastOne(maxConcurrentCallsPerPeer, "max-concurrent-calls-per-peer");
			atLeastOne(maxConcurrentRepairs, "max-concurrent-repairs");
			atLeastOne(virtualNodes, "virtual-nodes");
			positive(maxClockSkew, "max-clock-skew");
			positive(clockReservation, "clock-reservation");
			positive(clockOffsetWarning, "clock-offset-warning");
			if (clockOffsetWarning.compareTo(maxClockSkew) >= 0) {
				throw new IllegalArgumentException(
						"quorumkv.cluster.clock-offset-warning must be less than quorumkv.cluster.max-clock-skew");
			}
		}

		@Override
		public String toString() {
			// Never print the secret.
			return "ClusterProperties[nodes=" + this.nodes + ", self=" + this.self + ", secret="
					+ ((this.secret != null) ? "(set)" : "(none)") + ", replicaTimeout=" + this.replicaTimeout
					+ ", replicationFactor=" + this.replicationFactor + "]";
		}

	}

	/**
	 * TLS between the nodes (docs/security.md). The server side is Spring Boot's
	 * {@code server.ssl.bundle}; this is the side of the calls a node makes to its peers.
	 *
	 * @param bundle the Spring Boot SSL bundle ({@code spring.ssl.bundle.*}) of the calls
	 * to peers: its trust store decides which peer certificates are accepted, and its key
	 * store is this node's certificate when a peer asks for one; unset: plain HTTP, and
	 * every node URL is {@code http://}
	 * @param mutual whether a peer that presents a certificate trusted by
	 * {@code server.ssl} and naming one of the nodes' hosts may call the internal API
	 * without the cluster secret (which then becomes optional); needs
	 * {@code server.ssl.client-auth} {@code want} or {@code need}
	 */
	public record TlsProperties(@Nullable String bundle, @DefaultValue("false") boolean mutual) {

		public TlsProperties {
			if (bundle != null && bundle.isBlank()) {
				throw new IllegalArgumentException("quorumkv.cluster.tls.bundle is blank");
			}
			if (mutual && bundle == null) {
				throw new IllegalArgumentException(
						"quorumkv.cluster.tls.mutual needs quorumkv.cluster.tls.bundle (the peers' SSL bundle)");
			}
		}

	}

	private static void positive(Duration value, String name) {
		Bounds.positive(value, "quorumkv.cluster." + name);
	}

	private static void atLeastOne(long value, String name) {
		Bounds.atLeastOne(value, "quorumkv.cluster." + name);
	}

	/**
	 * Limits of the public API; requests over them get a 4xx or a 503, never an
	 * out-of-memory error.
	 *
	 * @param maxBodySize largest accepted PUT body (413 above)
	 * @param maxKeySize largest accepted key in bytes after decoding (400 above)
	 * @param maxInFlight public requests served at once; more get 503 with Retry-After
	 * @param maxBufferedBodies request body bytes held in memory at once, over all
	 * requests; more get 503 with Retry-After
	 * @param readTimeout a request whose body stops arriving for this long is answered
	 * 408 and its connection closed
	 * @param idleTimeout a connection with no request under way is closed after this long
	 * without a byte from its client
	 */
	public record HttpProperties(@DefaultValue("4MB") DataSize maxBodySize, @DefaultValue("1KB") DataSize maxKeySize,
			@DefaultValue("1024") int maxInFlight, @DefaultValue("256MB") DataSize maxBufferedBodies,
			@DefaultValue("30s") Duration readTimeout, @DefaultValue("60s") Duration idleTimeout) {

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
			if (maxBufferedBodies.toBytes() < maxBodySize.toBytes()) {
				throw new IllegalArgumentException(
						"quorumkv.http.max-buffered-bodies must be at least quorumkv.http.max-body-size");
			}
			if (readTimeout.isNegative() || readTimeout.isZero()) {
				throw new IllegalArgumentException("quorumkv.http.read-timeout must be positive");
			}
			if (idleTimeout.isNegative() || idleTimeout.isZero()) {
				throw new IllegalArgumentException("quorumkv.http.idle-timeout must be positive");
			}
		}

	}

	/**
	 * The placement algorithm named by {@code quorumkv.cluster.placement}
	 * ({@code rendezvous} or {@code consistent-hash}; Spring's relaxed enum binding maps
	 * those values to the constants). The {@code cluster} package builds the placement it
	 * names.
	 */
	public enum PlacementSetting {

		/** Rendezvous (highest random weight) hashing. */
		RENDEZVOUS,

		/** Consistent hashing on a ring of virtual nodes. */
		CONSISTENT_HASH

	}

}
