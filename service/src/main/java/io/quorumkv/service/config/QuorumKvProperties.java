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
 * Every {@code quorumkv.*} setting of a node, validated when bound: a bad value stops the
 * start with a message naming the property.
 *
 * @param storage where and how the node keeps its data
 * @param cluster the nodes of the cluster and this node's place in it
 * @param http limits of the public API
 * @param repair anti-entropy repair between the replicas of each range
 */
@ConfigurationProperties("quorumkv")
public record QuorumKvProperties(@DefaultValue StorageProperties storage, @DefaultValue ClusterProperties cluster,
		@DefaultValue HttpProperties http, @DefaultValue RepairProperties repair) {

	/**
	 * Anti-entropy repair (see docs/reliability.md): replicas of each token range compare
	 * Merkle trees and stream only the entries that differ, on a schedule and on demand.
	 *
	 * @param scheduled whether this node repairs its primary keys (those it is the first
	 * owner of) every interval
	 * @param interval time between scheduled repairs; keep it well under the tombstone
	 * grace period
	 * @param jitter each wait is drawn within this fraction of the interval around it
	 * @param ranges slices of the token space repaired and recorded separately (the same
	 * on every node)
	 * @param leavesPerRange leaves of each range's tree, a power of two: more leaves,
	 * less compared entry by entry when few entries differ, more memory (24 bytes a node)
	 * @param descendBelow a differing sub-range with at most this many entries on both
	 * sides is compared entry by entry rather than descended into
	 * @param maxDigests entry digests a repair holds at once, over every replica: the
	 * replicas' digest streams are merged by key and settled in batches of this many
	 * digests
	 * @param batch reads or writes in flight on the replica streams when pulling and
	 * pushing
	 * @param maxEntriesPerSecond entries a second this node's repair work reads, over
	 * every scan (its repairs and its peers'); 0 for no limit
	 * @param callTimeout longest wait for one repair call to a peer (a tree build scans
	 * its storage)
	 * @param sessionTimeout a node drops a peer's repair session idle this long
	 * @param maxServedSessions peers' repair sessions a node serves at once; more are
	 * refused with 503
	 */
	public record RepairProperties(@DefaultValue("true") boolean scheduled, @DefaultValue("24h") Duration interval,
			@DefaultValue("0.1") double jitter, @DefaultValue("16") int ranges,
			@DefaultValue("4096") int leavesPerRange, @DefaultValue("32") int descendBelow,
			@DefaultValue("100000") int maxDigests, @DefaultValue("256") int batch,
			@DefaultValue("50000") long maxEntriesPerSecond, @DefaultValue("10m") Duration callTimeout,
			@DefaultValue("10m") Duration sessionTimeout, @DefaultValue("2") int maxServedSessions) {

		public RepairProperties {
			if (interval.isNegative() || interval.isZero()) {
				throw new IllegalArgumentException("quorumkv.repair.interval must be positive");
			}
			if (jitter < 0 || jitter >= 1) {
				throw new IllegalArgumentException("quorumkv.repair.jitter must be in [0, 1)");
			}
			if (ranges < 1 || ranges > 65_536) {
				throw new IllegalArgumentException("quorumkv.repair.ranges must be 1..65536");
			}
			if (leavesPerRange < 1 || leavesPerRange > 1 << 20 || Integer.bitCount(leavesPerRange) != 1) {
				throw new IllegalArgumentException("quorumkv.repair.leaves-per-range must be a power of two, 1..2^20");
			}
			if (descendBelow < 1 || maxDigests < 1 || batch < 1 || maxServedSessions < 1) {
				throw new IllegalArgumentException(
						"quorumkv.repair.descend-below, max-digests, batch and max-served-sessions must be at least 1");
			}
			if (maxEntriesPerSecond < 0) {
				throw new IllegalArgumentException("quorumkv.repair.max-entries-per-second must not be negative");
			}
			if (callTimeout.isNegative() || callTimeout.isZero() || sessionTimeout.isNegative()
					|| sessionTimeout.isZero()) {
				throw new IllegalArgumentException("quorumkv.repair.call-timeout and session-timeout must be positive");
			}
		}

	}

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
	 */
	public record LsmProperties(@DefaultValue("64MB") DataSize memtableSize, @DefaultValue("4KB") DataSize blockSize,
			@DefaultValue("10") int bloomBitsPerKey, @DefaultValue("interval") FsyncPolicy fsync,
			@DefaultValue("100ms") Duration fsyncInterval, @DefaultValue("4") int level0CompactionTrigger,
			@DefaultValue("256MB") DataSize levelBaseSize, @DefaultValue("10") int levelSizeMultiplier,
			@DefaultValue("64MB") DataSize targetTableSize, @DefaultValue("7") int maxLevels,
			@DefaultValue("0s") Duration tombstoneGracePeriod, @DefaultValue("2") int maxImmutableMemtables,
			@DefaultValue("10s") Duration maxStall, @DefaultValue("lz4") Compression compression,
			@Nullable DataSize blockCache) {

		/** The backend's options for a folder. */
		public LsmOptions toOptions(Path directory) {
			return new LsmOptions(directory, this.memtableSize.toBytes(), (int) this.blockSize.toBytes(),
					this.bloomBitsPerKey, this.fsync, this.fsyncInterval, this.level0CompactionTrigger,
					this.levelBaseSize.toBytes(), this.levelSizeMultiplier, this.targetTableSize.toBytes(),
					this.maxLevels, this.tombstoneGracePeriod, this.maxImmutableMemtables, this.maxStall,
					this.compression,
					(this.blockCache != null) ? this.blockCache.toBytes() : LsmOptions.defaultBlockCacheSize());
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
	 * @param breaker circuit breaker per peer
	 * @param hints hinted handoff
	 * @param maxConcurrentRepairs read repairs in flight; more are skipped and counted
	 * @param placement how keys are placed on nodes: {@code rendezvous} or
	 * {@code consistent-hash}
	 * @param virtualNodes virtual nodes per node for {@code consistent-hash}
	 * @param stream the streams of replica operations to each peer
	 * @param replicationFactor how many nodes hold each key (the first of its placement
	 * order), 1 up to the number of nodes; by default every node; the default and the
	 * largest {@code from} of a request. Like {@code nodes}, it seeds the ring of a
	 * cluster's first start only
	 * @param id the cluster's id, which a node of another cluster does not share; by
	 * default derived from {@code nodes}
	 * @param membership membership changes: agreement, streaming, clean-up
	 * @param tls TLS of the calls to the peers
	 * @param maxClockSkew a timestamp from another node (a replica write, a batch, a
	 * hint, a read answer, a repair stream) further ahead of this node's wall clock than
	 * this is refused and never adopted
	 * @param clockReservation the clock's high-water mark is written to the data folder
	 * ahead of the stamps by this much, about once per this much progress; a restart
	 * never stamps below an earlier write
	 * @param clockOffsetWarning health warns (status WARNING) when a peer's measured
	 * clock offset exceeds this; less than max-clock-skew
	 * @param scan the pages a range read asks each member for
	 */
	public record ClusterProperties(@DefaultValue List<URI> nodes, @Nullable URI self, @Nullable String secret,
			@DefaultValue("1s") Duration replicaTimeout, @DefaultValue("500ms") Duration connectTimeout,
			@DefaultValue("64") int maxConnectionsPerPeer, @DefaultValue("1024") int maxPendingPerPeer,
			@DefaultValue("512") int maxConcurrentCallsPerPeer, @DefaultValue BreakerProperties breaker,
			@DefaultValue HintProperties hints, @DefaultValue("256") int maxConcurrentRepairs,
			@DefaultValue("rendezvous") PlacementSetting placement, @DefaultValue("128") int virtualNodes,
			@DefaultValue StreamProperties stream, @Nullable Integer replicationFactor, @Nullable String id,
			@DefaultValue MembershipProperties membership, @DefaultValue TlsProperties tls,
			@DefaultValue("500ms") Duration maxClockSkew, @DefaultValue("1s") Duration clockReservation,
			@DefaultValue("250ms") Duration clockOffsetWarning, @DefaultValue ScanProperties scan) {

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
	 * The pages of a range read: the coordinator asks each member for a page of its local
	 * entries at a time, tombstones and older versions included, and for the next page
	 * only when its merge needs it (docs/architecture.md). A page is the client's limit
	 * plus {@code pageSlack}, at least {@code minPage} and at most {@code maxPage}
	 * entries; a range without a limit reads pages of {@code maxPage}.
	 *
	 * @param minPage fewest entries a member is asked for at once
	 * @param maxPage most entries a member is asked for at once: what one page costs a
	 * member and the coordinator is bounded by it
	 * @param pageSlack entries a page asks for beyond the limit, for the tombstones and
	 * older versions the merge drops, so that one page per member usually ends a scan
	 */
	public record ScanProperties(@DefaultValue("64") int minPage, @DefaultValue("1000") int maxPage,
			@DefaultValue("64") int pageSlack) {

		public ScanProperties {
			if (minPage < 1 || maxPage < minPage || maxPage > 100_000) {
				throw new IllegalArgumentException(
						"quorumkv.cluster.scan.min-page and max-page must be 1 <= min-page <= max-page <= 100000");
			}
			if (pageSlack < 0 || pageSlack > 100_000) {
				throw new IllegalArgumentException("quorumkv.cluster.scan.page-slack must be 0..100000");
			}
		}

		/** The page a member is asked for, for a range read of at most {@code limit}. */
		public int pageSize(long limit) {
			// No limit is Long.MAX_VALUE: cut it to a page before adding the slack.
			long wanted = Math.min(limit, this.maxPage) + this.pageSlack;
			return (int) Math.max(this.minPage, Math.min(this.maxPage, wanted));
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

	/**
	 * The streams of replica operations between nodes (docs/design.md, "The peer
	 * transport"): for each peer and each event loop one long-lived exchange carries the
	 * replica reads and writes, hints and read repair included. Keep {@code maxFrame} the
	 * same on every node: it also bounds the frames a node accepts.
	 *
	 * @param maxFrame the largest frame of a stream (at least one value of the largest
	 * size with its key and framing is always allowed), and the cap of the other binary
	 * bodies between nodes
	 * @param localWrites whether the writes a node coordinates whose answer waits for a
	 * peer anyway (ack above one) go to its own storage together, once per turn of its
	 * event loop (one WAL write for all the requests of a wake-up), instead of one by one
	 * @param heartbeat how often an open stream pings its peer: it keeps the stream open
	 * through the peer's {@code quorumkv.http.read-timeout} (keep it well below that),
	 * measures the peer's clock, and a missed one ends the stream
	 * @param idleClose a stream that carried no operation for this long is closed
	 * @param maxBackoff after failed attempts to open a stream, the longest wait before
	 * the next (operations meanwhile fail at once); the wait ends early when the peer is
	 * known to be up
	 */
	public record StreamProperties(@DefaultValue("1MB") DataSize maxFrame, @DefaultValue("true") boolean localWrites,
			@DefaultValue("1s") Duration heartbeat, @DefaultValue("60s") Duration idleClose,
			@DefaultValue("1s") Duration maxBackoff) {

		public StreamProperties {
			if (maxFrame.toBytes() < 1024 || maxFrame.toBytes() > Integer.MAX_VALUE / 2) {
				throw new IllegalArgumentException("quorumkv.cluster.stream.max-frame must be 1KB..1GB");
			}
			positive(heartbeat, "stream.heartbeat");
			positive(idleClose, "stream.idle-close");
			positive(maxBackoff, "stream.max-backoff");
		}

	}

	/**
	 * Membership changes (docs/membership.md): how keys stream to their new owners (the
	 * changes themselves are entries of the metadata log).
	 *
	 * @param callTimeout how long a node waits for a peer's answer to a membership call
	 * (a newcomer's identity, a target's transfers)
	 * @param streamRate bytes per second a node receiving keys takes from all its sources
	 * together
	 * @param streamBatch entries of a transfer written to storage together, at most this
	 * many bytes
	 * @param streamSources how many of its sources a node receiving keys pulls from at
	 * once; the others wait their turn. A source's first stream recompiles much of its
	 * serving code (the JIT sees new types in the shared Reactor and Netty paths); one at
	 * a time, the other replicas of a key answer while it does
	 * @param checkpointInterval how often a node receiving keys makes them durable and
	 * records how far each transfer has come (where it resumes after a restart)
	 * @param pollInterval how often the leader of the metadata group checks the transfers
	 * of the change under way (and the group's voters), and a member waiting for its turn
	 * to clean up asks the member before it
	 * @param autoCleanup whether a node removes the keys it no longer owns once a change
	 * has finished (otherwise {@code scripts/qkv cleanup} does)
	 * @param cleanupDelay how long after a change has finished a node waits before its
	 * automatic clean-up, so that the last replica writes of the previous ring (those
	 * still under way when it was replaced) have landed and are removed too; the members
	 * then clean up one at a time, in the order of their ids, each once the one before it
	 * has finished (or does not answer)
	 * @param cleanupRate entries a clean-up looks at per second (kept or removed): at
	 * full speed it reads and rewrites the node's whole store as fast as a core allows
	 * @param autoJoin whether a node started without a ring asks the nodes of
	 * {@code quorumkv.cluster.nodes} to join it, every {@code poll-interval} until one
	 * agrees (a new pod of a StatefulSet that scales up); until it is a member its
	 * readiness is down
	 */
	public record MembershipProperties(@DefaultValue("5s") Duration callTimeout,
			@DefaultValue("64MB") DataSize streamRate, @DefaultValue("1MB") DataSize streamBatch,
			@DefaultValue("1") int streamSources, @DefaultValue("1s") Duration checkpointInterval,
			@DefaultValue("500ms") Duration pollInterval, @DefaultValue("true") boolean autoCleanup,
			@DefaultValue("5s") Duration cleanupDelay, @DefaultValue("50000") long cleanupRate,
			@DefaultValue("false") boolean autoJoin) {

		public MembershipProperties {
			positive(callTimeout, "membership.call-timeout");
			positive(checkpointInterval, "membership.checkpoint-interval");
			positive(pollInterval, "membership.poll-interval");
			positive(cleanupDelay, "membership.cleanup-delay");
			if (streamRate.toBytes() < 1024) {
				throw new IllegalArgumentException("quorumkv.cluster.membership.stream-rate must be at least 1KB");
			}
			if (streamBatch.toBytes() < 1024 || streamBatch.toBytes() > 64 * 1024 * 1024) {
				throw new IllegalArgumentException("quorumkv.cluster.membership.stream-batch must be 1KB..64MB");
			}
			if (cleanupRate < 1) {
				throw new IllegalArgumentException("quorumkv.cluster.membership.cleanup-rate must be at least 1");
			}
			if (streamSources < 1 || streamSources > 64) {
				throw new IllegalArgumentException("quorumkv.cluster.membership.stream-sources must be 1..64");
			}
		}

	}

	/**
	 * The circuit breaker of each peer: after enough failed calls it opens and calls to
	 * the peer fail at once instead of costing a timeout each; after {@code waitInOpen} a
	 * few trial calls decide whether it closes again.
	 *
	 * @param failureRateThreshold percentage of failed calls that opens the breaker
	 * @param slidingWindow calls the failure rate is computed over
	 * @param minimumCalls calls needed before the rate is computed
	 * @param waitInOpen how long an open breaker refuses calls
	 * @param halfOpenCalls trial calls a breaker admits once the wait is over; it closes
	 * when they succeed. Clients' requests are trial calls too: too few, and a burst of
	 * requests right after a peer comes back is refused while the first trials run
	 */
	public record BreakerProperties(@DefaultValue("50") int failureRateThreshold, @DefaultValue("20") int slidingWindow,
			@DefaultValue("5") int minimumCalls, @DefaultValue("2s") Duration waitInOpen,
			@DefaultValue("10") int halfOpenCalls) {

		public BreakerProperties {
			if (failureRateThreshold < 1 || failureRateThreshold > 100) {
				throw new IllegalArgumentException("quorumkv.cluster.breaker.failure-rate-threshold must be 1..100");
			}
			atLeastOne(slidingWindow, "breaker.sliding-window");
			atLeastOne(minimumCalls, "breaker.minimum-calls");
			positive(waitInOpen, "breaker.wait-in-open");
			atLeastOne(halfOpenCalls, "breaker.half-open-calls");
		}

	}

	/**
	 * Hinted handoff: writes a replica missed are kept (durably, apart from the data) and
	 * delivered when it is reachable again.
	 *
	 * @param maxPending hints kept per peer; more are dropped and counted
	 * @param maxAge hints older than this are dropped instead of delivered
	 * @param deliveryInterval how often pending hints are tried
	 * @param maxBackoff longest pause after failed deliveries to a peer
	 */
	public record HintProperties(@DefaultValue("100000") long maxPending, @DefaultValue("3h") Duration maxAge,
			@DefaultValue("1s") Duration deliveryInterval, @DefaultValue("30s") Duration maxBackoff) {

		public HintProperties {
			if (maxPending < 0) {
				throw new IllegalArgumentException("quorumkv.cluster.hints.max-pending must not be negative");
			}
			positive(maxAge, "hints.max-age");
			positive(deliveryInterval, "hints.delivery-interval");
			positive(maxBackoff, "hints.max-backoff");
		}

	}

	private static void positive(Duration value, String name) {
		if (value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException("quorumkv.cluster." + name + " must be positive");
		}
	}

	private static void atLeastOne(long value, String name) {
		if (value < 1) {
			throw new IllegalArgumentException("quorumkv.cluster." + name + " must be at least 1");
		}
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
