package io.quorumkv.service.metadata;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * This node's member of the cluster's metadata group: an Apache Ratis server whose state
 * machine is the ring ({@link RingStateMachine}), and a Raft client through which the
 * node proposes ring changes. The group's id is derived from the cluster id; its voters
 * are the first up to five normal nodes of the ring by id (three for three or four
 * nodes), every other member of the ring listens ({@link #voters}). Ratis keeps its log,
 * its term and vote and its snapshots under {@code <data folder>/raft}.
 *
 * <p>
 * A node that starts with a ring and no metadata log (the cluster's first start, or a
 * cluster from before the log) proposes its ring as a format entry once a leader is
 * elected: the first such entry becomes the log's first ring, and the others are refused
 * ({@link RingCommand}). A node without a ring (a newcomer) starts a Raft server of no
 * group, which the group's leader adds when the node joins.
 */
public final class MetadataGroup implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(MetadataGroup.class);

	/** Where Ratis' metrics of this node are exported ({@link RaftMetrics}). */
	private final MeterRegistry meters;

	/** Keeps Ratis' term and vote recoverable after a failed write of them. */
	private final RaftMetaGuard metaGuard;

	/** The id the Raft server runs under, while it runs. */
	private volatile @Nullable String exportedAs;

	/**
	 * Attempts of one client request, 200 ms apart (each under the request timeout): an
	 * election after a leader's death takes a few seconds.
	 */
	private static final int RETRIES = 60;

	/** The file of the two-phase commit of ring changes that the log replaced. */
	static final String AGREEMENT_FILE = "ring-agreement";

	private final ClusterState state;

	private final RaftTransport transport;

	private final RaftEndpoint endpoint;

	private final Scheduler scheduler;

	private final Path folder;

	private final Settings settings;

	private final RingStateMachine machine;

	private final List<Runnable> leaderListeners = new CopyOnWriteArrayList<>();

	private volatile @Nullable RaftServer server;

	private volatile @Nullable RaftClient client;

	private volatile List<RaftPeer> clientPeers = List.of();

	private volatile @Nullable Disposable formatting;

	private volatile @Nullable RaftGroupId groupId;

	private volatile boolean watchingId;

	private volatile boolean closed;

	private volatile Function<Ring, Mono<Void>> beforeFirstRing = (ring) -> Mono.empty();

	/**
	 * The timing of the metadata layer.
	 *
	 * @param electionMin the least time a follower waits for the leader before it stands
	 * for election
	 * @param electionMax the most it waits
	 * @param requestTimeout how long one Raft call may take
	 * @param proposalTimeout how long a proposal may take, retries included
	 * @param snapshotEvery entries between two snapshots (the log is purged up to each)
	 */
	public record Settings(Duration electionMin, Duration electionMax, Duration requestTimeout,
			Duration proposalTimeout, long snapshotEvery) {

		/** Suited to small machines: two shared cores, a JVM that may pause. */
		public static final Settings DEFAULTS = new Settings(Duration.ofMillis(1500), Duration.ofMillis(3000),
				Duration.ofSeconds(3), Duration.ofSeconds(15), 100);

	}

	MetadataGroup(ClusterState state, RaftTransport transport, RaftEndpoint endpoint, Scheduler scheduler,
			Path dataFolder, Settings settings, MeterRegistry meters) {
		this.meters = meters;
		this.state = state;
		this.transport = transport;
		this.endpoint = endpoint;
		this.scheduler = scheduler;
		this.folder = dataFolder.resolve("raft");
		this.metaGuard = new RaftMetaGuard(this.folder, dataFolder.resolve("raft-meta-copy"));
		this.settings = settings;
		this.machine = new RingStateMachine(this::adopt, this::leaderChanged, this::rememberTerm);
	}

	/** The group id of a cluster: a name-based UUID of its id. */
	static RaftGroupId groupId(String clusterId) {
		return RaftGroupId
			.valueOf(UUID.nameUUIDFromBytes(("quorumkv-metadata:" + clusterId).getBytes(StandardCharsets.UTF_8)));
	}

	/**
	 * The voters of a ring: its first normal nodes by id, five of five or more, three of
	 * three or four, all of fewer ({@link GroupPeers#voters}).
	 */
	public static List<RingNode> voters(Ring ring) {
		return GroupPeers.voters(ring);
	}

	/** Starts the Raft server (once the node's routes answer). */
	public synchronized void start() throws IOException {
		if (this.server != null) {
			return;
		}
		forgetAgreementFile();
		Ring ring = this.state.ring().orElse(null);
		this.exportedAs = this.state.self().id();
		RaftMetrics.export(this.exportedAs, this.meters);
		RaftServer.Builder builder = RaftServer.newBuilder()
			.setServerId(RaftPeerId.valueOf(this.state.self().id()))
			.setProperties(properties())
			.setParameters(HttpRpcType.parameters(this.transport, this.state.self().address()))
			.setStateMachine(this.machine)
			.setOption(RaftStorage.StartupOption.RECOVER);
		if (ring != null) {
			this.groupId = groupId(ring.clusterId());
			builder.setGroup(RaftGroup.valueOf(this.groupId, GroupPeers.peers(ring)));
		}
		this.metaGuard.repair();
		RaftServer raft = builder.build();
		this.endpoint.serve(raft);
		raft.start();
		this.server = raft;
		this.metaGuard.remember();
		logger.info("Metadata group started" + ((ring != null)
				? " for cluster " + ring.clusterId() + ", voters " + voters(ring).stream().map(RingNode::id).toList()
				: " without a group (waiting to be joined)"));
		if (ring != null) {
			this.formatting = formatWhenBehind();
		}
		if (!this.watchingId) {
			this.watchingId = true;
			this.state.onChange((adopted) -> {
				RaftServer running = this.server;
				if (running != null && !running.getId().toString().equals(this.state.self().id())) {
					restartUnderNewId();
				}
			});
		}
	}

	/**
	 * A new node that replaces a dead one takes the dead node's id with its first ring
	 * (ClusterState), and the group knows it by that id: its Raft server, started under
	 * the id it had, starts again under the new one (it held no group yet).
	 */
	private void restartUnderNewId() {
		Mono.fromRunnable(() -> {
			synchronized (this) {
				if (this.closed) {
					return;
				}
				logger.info("This node took the id " + this.state.self().id()
						+ " of the node it replaces: its Raft server starts again under it");
				stop();
				try {
					start();
				}
				catch (IOException ex) {
					logger.warn("The metadata group did not start again: " + ex.getMessage());
				}
			}
		}).subscribeOn(this.scheduler).subscribe();
	}

	/**
	 * The two-phase commit that kept ring changes before the metadata log left its state
	 * in {@code <data folder>/ring-agreement}: a proposal prepared here is moot now (the
	 * log decides), so the file goes.
	 */
	private void forgetAgreementFile() throws IOException {
		Path old = this.folder.resolveSibling(AGREEMENT_FILE);
		if (java.nio.file.Files.deleteIfExists(old)) {
			logger.info("Deleted " + old + ", the state of the two-phase commit that ring changes used before the "
					+ "metadata log");
		}
	}

	private RaftProperties properties() {
		RaftProperties properties = new RaftProperties();
		RaftConfigKeys.Rpc.setType(properties, HttpRpcType.INSTANCE);
		RaftServerConfigKeys.setStorageDir(properties, List.of(this.folder.toFile()));
		RaftServerConfigKeys.Rpc.setTimeoutMin(properties, millis(this.settings.electionMin()));
		RaftServerConfigKeys.Rpc.setTimeoutMax(properties, millis(this.settings.electionMax()));
		RaftServerConfigKeys.Rpc.setRequestTimeout(properties, millis(this.settings.requestTimeout()));
		RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
		RaftServerConfigKeys.Snapshot.setCreationGap(properties, this.settings.snapshotEvery());
		RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, true);
		RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf("1MB"));
		RaftServerConfigKeys.Log.setPreallocatedSize(properties, SizeInBytes.valueOf("64KB"));
		RaftServerConfigKeys.Log.setWriteBufferSize(properties, SizeInBytes.valueOf("2MB"));
		RaftServerConfigKeys.Log.Appender.setBufferByteLimit(properties, SizeInBytes.valueOf("1MB"));
		RaftServerConfigKeys.Log.Appender.setSnapshotChunkSizeMax(properties, SizeInBytes.valueOf("256KB"));
		RaftClientConfigKeys.Rpc.setRequestTimeout(properties, millis(this.settings.requestTimeout()));
		return properties;
	}

	private static TimeDuration millis(Duration duration) {
		return TimeDuration.valueOf(duration.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
	}

	/**
	 * Until the log holds a ring at least as new as this node's: proposes this node's
	 * ring as a format entry (every 200 ms, while no leader answers). Once the log's
	 * ring, read through the leader, is this node's or older (or has been installed here
	 * when newer), the node's ring is confirmed current ({@link ClusterState#confirm()}).
	 */
	private Disposable formatWhenBehind() {
		long started = System.nanoTime();
		return Flux.interval(Duration.ZERO, Duration.ofMillis(200), this.scheduler)
			.onBackpressureDrop()
			.concatMap((tick) -> formatIfBehind(started).onErrorResume((error) -> {
				logger.debug("Metadata log not formatted yet: " + error.getMessage());
				return Mono.just(false);
			}), 1)
			.takeUntil((done) -> done)
			.subscribe();
	}

	private Mono<Boolean> formatIfBehind(long started) {
		Ring mine = this.state.ring().orElse(null);
		if (mine == null) {
			return Mono.just(true);
		}
		return read().flatMap((logged) -> {
			if (logged.isPresent() && logged.get().epoch() >= mine.epoch()) {
				return confirm(logged.get(), started).thenReturn(true);
			}
			logger.info("The metadata log " + logged.map((r) -> "is at epoch " + r.epoch()).orElse("holds no ring")
					+ ": proposing this node's " + mine.describe() + " as its start");
			// Asked again: the next read confirms the ring the log holds then.
			return submit(RingCommand.format(mine)).map((outcome) -> false);
		});
	}

	/** Installs the log's ring when newer than this node's, then confirms it. */
	private Mono<Void> confirm(Ring logged, long started) {
		if (this.state.confirmed()) {
			return Mono.empty();
		}
		long before = this.state.epoch();
		return this.state.install(logged).then(Mono.fromRunnable(() -> {
			this.state.confirm();
			logger.info("Ring confirmed current by the metadata group at epoch " + Math.max(before, logged.epoch())
					+ ((logged.epoch() > before) ? " (this node restarted at epoch " + before + ")" : "") + ", "
					+ Duration.ofNanos(System.nanoTime() - started).toMillis()
					+ " ms after the group started here: the node coordinates requests");
		}));
	}

	/** The log's ring, read through the leader (linearizable); empty before the first. */
	public Mono<Optional<Ring>> read() {
		return Mono.defer(() -> Mono.fromFuture(client().async().sendReadOnly(Message.EMPTY)))
			.subscribeOn(this.scheduler)
			.map((reply) -> {
				failIfNotSuccess(reply);
				String json = reply.getMessage().getContent().toStringUtf8();
				return "null".equals(json) ? Optional.<Ring>empty()
						: Optional.of(io.quorumkv.service.cluster.RingJson.read(json));
			})
			.timeout(this.settings.proposalTimeout(), this.scheduler);
	}

	/**
	 * Proposes {@code next} as the successor of the ring of epoch {@code base}: applied
	 * when the log's ring is still at {@code base} once the entry is committed, refused
	 * with the log's epoch otherwise.
	 */
	public Mono<Proposal> propose(long base, Ring next) {
		return submit(RingCommand.change(base, next))
			.map((outcome) -> new Proposal(outcome.applied(), outcome.epoch(), outcome.reason()));
	}

	/**
	 * What became of a proposal.
	 *
	 * @param applied whether the ring changed
	 * @param epoch the log's epoch after the proposal's entry
	 * @param reason why it was refused, or null
	 */
	public record Proposal(boolean applied, long epoch, @Nullable String reason) {
	}

	private Mono<RingCommand.Outcome> submit(RingCommand command) {
		byte[] bytes = command.toBytes();
		return Mono.defer(() -> Mono.fromFuture(client().async().send(Message.valueOf(ByteString.copyFrom(bytes)))))
			.subscribeOn(this.scheduler)
			.map((reply) -> {
				failIfNotSuccess(reply);
				return RingCommand.Outcome.read(reply.getMessage().getContent().toByteArray());
			})
			.timeout(this.settings.proposalTimeout(), this.scheduler);
	}

	private static void failIfNotSuccess(RaftClientReply reply) {
		if (!reply.isSuccess()) {
			throw new IllegalStateException("the metadata log did not take the request: "
					+ ((reply.getException() != null) ? reply.getException().getMessage() : "no reason given"));
		}
	}

	/**
	 * The Raft client, made again when the ring's peers change (it learns the leader by
	 * itself, from any peer it reaches).
	 */
	private synchronized RaftClient client() {
		Ring ring = Optional.ofNullable(this.machine.ring()).or(this.state::ring).orElse(null);
		if (ring == null) {
			throw new IllegalStateException("this node has no ring: it is not a member of a metadata group");
		}
		List<RaftPeer> peers = GroupPeers.peers(ring);
		RaftClient current = this.client;
		if (current != null && peers.equals(this.clientPeers)) {
			return current;
		}
		if (current != null) {
			closeQuietly(current);
		}
		RaftProperties properties = properties();
		RaftClient made = RaftClient.newBuilder()
			.setRaftGroup(RaftGroup.valueOf(groupId(ring.clusterId()), peers))
			.setProperties(properties)
			.setClientRpc(new HttpClientRpc(this.transport))
			.setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(RETRIES,
					TimeDuration.valueOf(200, java.util.concurrent.TimeUnit.MILLISECONDS)))
			.build();
		this.client = made;
		this.clientPeers = peers;
		return made;
	}

	/** Whether this node leads the metadata group now. */
	public boolean leads() {
		RaftServer raft = this.server;
		RaftGroupId group = this.groupId;
		if (raft == null || group == null) {
			return false;
		}
		try {
			return raft.getDivision(group).getInfo().isLeader();
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * What this node knows of the group, for {@code qkv status}: its leader (by node id,
	 * null while none is known), whether this node leads, the voters and listeners.
	 */
	public java.util.Map<String, @Nullable Object> view() {
		java.util.Map<String, @Nullable Object> view = new java.util.LinkedHashMap<>();
		RaftServer raft = this.server;
		RaftGroupId group = this.groupId;
		view.put("group", (group != null) ? group.getUuid().toString() : null);
		view.put("leads", leads());
		if (raft != null && group != null) {
			try {
				RaftServer.Division division = raft.getDivision(group);
				RaftPeerId leader = division.getInfo().getLeaderId();
				view.put("leader", (leader != null) ? leader.toString() : null);
				view.put("voters",
						GroupPeers.ids(division.getRaftConf().getCurrentPeers(RaftPeerRole.FOLLOWER))
							.stream()
							.sorted()
							.toList());
				view.put("listeners",
						GroupPeers.ids(division.getRaftConf().getCurrentPeers(RaftPeerRole.LISTENER))
							.stream()
							.sorted()
							.toList());
				view.put("applied", division.getInfo().getLastAppliedIndex());
				var role = division.getInfo().getRoleInfoProto();
				if (role.hasLeaderInfo()) {
					// The leader's view of who is up: how long since each other member
					// of the group last answered it (heartbeats go every few hundred ms).
					java.util.Map<String, Long> heard = new java.util.TreeMap<>();
					role.getLeaderInfo()
						.getFollowerInfoList()
						.forEach((follower) -> heard.put(follower.getId().getId().toStringUtf8(),
								follower.getLastRpcElapsedTimeMs()));
					view.put("lastHeardMs", heard);
				}
			}
			catch (IOException ex) {
				view.put("leader", null);
			}
		}
		return view;
	}

	/** The log's ring as this node has applied it. */
	public Optional<Ring> logged() {
		return Optional.ofNullable(this.machine.ring());
	}

	/** Called (on a Ratis thread) whenever the group's leader changes. */
	public void onLeaderChange(Runnable listener) {
		this.leaderListeners.add(listener);
	}

	/**
	 * Copies the term and vote (they change with elections): the copy follows each leader
	 * change and each first entry of a new term, and an election no one won is covered by
	 * {@link RaftMetaGuard}'s margin (with Ratis' pre-vote, on by default, a node only
	 * starts an election a majority would join).
	 */
	private void rememberTerm() {
		this.scheduler.schedule(this.metaGuard::remember);
	}

	private void leaderChanged() {
		rememberTerm();
		for (Runnable listener : this.leaderListeners) {
			try {
				listener.run();
			}
			catch (RuntimeException ex) {
				logger.warn("A leader listener failed", ex);
			}
		}
	}

	/**
	 * Adopts a ring the log applied: written to the ring file and served under, when this
	 * node has a ring already or the ring lists it (a newcomer replaying the log from its
	 * start adopts nothing before the ring that adds it).
	 */
	private CompletableFuture<?> adopt(Ring ring) {
		Ring mine = this.state.ring().orElse(null);
		boolean listed = ring.node(this.state.self().id()).isPresent()
				|| ring.nodeAt(this.state.self().url()).isPresent();
		if (mine == null && !listed) {
			return CompletableFuture.completedFuture(null);
		}
		if (mine != null && ring.epoch() <= mine.epoch()) {
			return CompletableFuture.completedFuture(null);
		}
		if (this.groupId == null) {
			this.groupId = groupId(ring.clusterId());
		}
		Mono<Void> before = (mine == null) ? this.beforeFirstRing.apply(ring).onErrorResume((error) -> {
			logger.warn("Before adopting the first ring: " + error.getMessage());
			return Mono.empty();
		}) : Mono.empty();
		return before.then(this.state.install(ring)).onErrorResume((error) -> {
			logger.warn("Could not adopt " + ring.describe() + " from the metadata log: " + error.getMessage());
			return Mono.just(false);
		}).toFuture();
	}

	/**
	 * Runs before a node without a ring adopts its first one from the log (a newcomer
	 * notes whether its storage is empty).
	 */
	public void beforeFirstRing(Function<Ring, Mono<Void>> hook) {
		this.beforeFirstRing = hook;
	}

	/**
	 * On the leader: makes the group's voters and listeners those the log's ring calls
	 * for ({@link GroupPeers#peers}): a node new to the group is given it first (Ratis'
	 * group management), then the configuration changes through Ratis' own joint
	 * consensus. Does nothing on another node, or while a configuration change is under
	 * way.
	 */
	public Mono<Void> reconcilePeers() {
		return Mono.fromRunnable(this::reconcileNow).subscribeOn(this.scheduler).then();
	}

	private void reconcileNow() {
		RaftServer raft = this.server;
		RaftGroupId group = this.groupId;
		Ring ring = this.machine.ring();
		if (raft == null || group == null || ring == null || !leads()) {
			return;
		}
		try {
			GroupPeers.reconcile(raft.getDivision(group).getRaftConf(), group, ring, this.state.self().id(),
					this::client);
		}
		catch (IOException | RuntimeException ex) {
			logger.warn("Metadata group configuration not changed yet: " + ex.getMessage());
		}
	}

	@Override
	public synchronized void close() {
		this.closed = true;
		stop();
	}

	private synchronized void stop() {
		Disposable format = this.formatting;
		if (format != null) {
			format.dispose();
		}
		RaftClient current = this.client;
		if (current != null) {
			closeQuietly(current);
			this.client = null;
		}
		RaftServer raft = this.server;
		if (raft != null) {
			this.endpoint.serve(null);
			try {
				raft.close();
			}
			catch (IOException ex) {
				logger.warn("Closing the metadata group: " + ex.getMessage());
			}
			this.server = null;
		}
		String exported = this.exportedAs;
		if (exported != null) {
			RaftMetrics.unexport(exported);
			this.exportedAs = null;
		}
	}

	private static void closeQuietly(RaftClient client) {
		try {
			client.close();
		}
		catch (IOException ex) {
			logger.debug("Closing a Raft client: " + ex.getMessage());
		}
	}

}
