package io.quorumkv.service.metadata;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
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
 * Its parts: {@link RaftSetup} (Ratis' properties), {@link MetadataClient} (reads and
 * proposals), {@link RingFormat} (a node that starts with a ring brings the log up to
 * it), {@link RingAdoption} (rings the log applies become this node's) and
 * {@link GroupView} (what {@code qkv status} shows). A node without a ring (a newcomer)
 * starts a Raft server of no group, which the group's leader adds when the node joins.
 */
public final class MetadataGroup implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(MetadataGroup.class);

	/** Where Ratis' metrics of this node are exported ({@link RaftMetrics}). */
	private final MeterRegistry meters;

	/** Keeps Ratis' term and vote recoverable after a failed write of them. */
	private final RaftMetaGuard metaGuard;

	/** The id the Raft server runs under, while it runs. */
	private volatile @Nullable String exportedAs;

	/** The file of the two-phase commit of ring changes that the log replaced. */
	static final String AGREEMENT_FILE = "ring-agreement";

	private final ClusterState state;

	private final RaftTransport transport;

	private final RaftEndpoint endpoint;

	private final Scheduler scheduler;

	private final Path folder;

	private final MetadataTiming settings;

	private final RingStateMachine machine;

	private final List<Runnable> leaderListeners = new CopyOnWriteArrayList<>();

	private volatile @Nullable RaftServer server;

	private final MetadataClient client;

	private volatile @Nullable Disposable formatting;

	private volatile @Nullable RaftGroupId groupId;

	private volatile boolean watchingId;

	private volatile boolean closed;

	private final RingAdoption adoption;

	MetadataGroup(ClusterState state, RaftTransport transport, RaftEndpoint endpoint, Scheduler scheduler,
			Path dataFolder, MetadataTiming settings, MeterRegistry meters) {
		this.meters = meters;
		this.state = state;
		this.transport = transport;
		this.endpoint = endpoint;
		this.scheduler = scheduler;
		this.folder = dataFolder.resolve("raft");
		this.metaGuard = new RaftMetaGuard(this.folder, dataFolder.resolve("raft-meta-copy"));
		this.settings = settings;
		this.adoption = new RingAdoption(state);
		this.machine = new RingStateMachine(this::adopt, this::leaderChanged, this::rememberTerm);
		this.client = new MetadataClient(transport, () -> Optional.ofNullable(this.machine.ring()).or(this.state::ring),
				this::properties, scheduler, settings.proposalTimeout());
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
			this.formatting = RingFormat.start(this.state, this.client, this.scheduler);
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
		return RaftSetup.properties(this.folder, this.settings);
	}

	/** The log's ring, read through the leader (linearizable); empty before the first. */
	public Mono<Optional<Ring>> read() {
		return this.client.read();
	}

	/**
	 * Proposes {@code next} as the successor of the ring of epoch {@code base}: applied
	 * when the log's ring is still at {@code base} once the entry is committed, refused
	 * with the log's epoch otherwise.
	 */
	public Mono<Proposal> propose(long base, Ring next) {
		return this.client.submit(RingCommand.change(base, next))
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
	 * What this node knows of the group, for {@code qkv status} ({@link GroupView}).
	 */
	public Map<String, @Nullable Object> view() {
		return GroupView.of(this.server, this.groupId, leads());
	}

	/**
	 * On the leader, how many milliseconds ago each other member of the group last
	 * answered it; empty on any other node ({@link Liveness}).
	 */
	Map<String, Long> heardByLeader() {
		return GroupView.heardByLeader(this.server, this.groupId);
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

	/** Adopts a ring the log applied ({@link RingAdoption}); knows the group by it. */
	private CompletableFuture<?> adopt(Ring ring) {
		return this.adoption.adopt(ring, () -> {
			if (this.groupId == null) {
				this.groupId = groupId(ring.clusterId());
			}
		});
	}

	/**
	 * Runs before a node without a ring adopts its first one from the log (a newcomer
	 * notes whether its storage is empty).
	 */
	public void beforeFirstRing(Function<Ring, Mono<Void>> hook) {
		this.adoption.beforeFirstRing(hook);
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
					this.client::client);
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
		this.client.close();
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

}
