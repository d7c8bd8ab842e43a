package io.quorumkv.service.metadata;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * This node's member of the cluster's metadata group: an Apache Ratis server whose state
 * machine is the ring ({@link RingStateMachine}), and a Raft client through which the
 * node proposes ring changes. The group's id is derived from the cluster id and the
 * ring's generation ({@link GroupGenerations}); its voters are the first up to five
 * normal nodes of the ring by id (three for three or four nodes), every other member of
 * the ring listens ({@link #voters}). Ratis keeps its log, its term and vote and its
 * snapshots under {@code <data folder>/raft}.
 *
 * <p>
 * Its parts: {@link GroupServer} (the Raft server's life), {@link RaftSetup} (Ratis'
 * properties), {@link MetadataClient} (reads and proposals), {@link RingFormat} (a node
 * that starts with a ring brings the log up to it), {@link RingAdoption} (rings the log
 * applies become this node's), {@link ForcedGeneration} (a new group from one surviving
 * voter) and {@link GroupView} (what {@code qkv status} shows). A node without a ring (a
 * newcomer) starts a Raft server of no group, which the group's leader adds when the node
 * joins.
 */
public final class MetadataGroup implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(MetadataGroup.class);

	private final ClusterState state;

	private final Scheduler scheduler;

	private final List<Runnable> leaderListeners = new CopyOnWriteArrayList<>();

	private final MetadataClient client;

	private final GroupServer raft;

	private final RingAdoption adoption;

	/** The ring and group configuration last found to agree ({@link #reconcilePeers}). */
	private volatile @Nullable Reconciled reconciled;

	MetadataGroup(ClusterState state, RaftTransport transport, RaftEndpoint endpoint, Scheduler scheduler,
			Path dataFolder, MetadataTiming settings, MeterRegistry meters) {
		this.state = state;
		this.scheduler = scheduler;
		this.adoption = new RingAdoption(state);
		Path folder = dataFolder.resolve("raft");
		this.client = new MetadataClient(transport, this::groupRing, () -> RaftSetup.properties(folder, settings),
				scheduler, settings.proposalTimeout());
		this.raft = new GroupServer(state, transport, endpoint, scheduler, dataFolder, settings, meters,
				this::newMachine, this.client);
	}

	/** The ring whose nodes are the group's peers: the log's, else this node's. */
	private Optional<Ring> groupRing() {
		return Optional.ofNullable(this.raft.machine().ring()).or(this.state::ring);
	}

	private RingStateMachine newMachine() {
		return new RingStateMachine(this::adopt, this::leaderChanged, () -> this.raft.rememberTerm());
	}

	/**
	 * The voters of a ring: its first normal nodes by id, five of five or more, three of
	 * three or four, all of fewer ({@link GroupPeers#voters}).
	 */
	public static List<RingNode> voters(Ring ring) {
		return GroupPeers.voters(ring);
	}

	/** Starts the Raft server (once the node's routes answer). */
	public void start() throws IOException {
		this.raft.start();
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
		RaftServer raft = this.raft.server();
		RaftGroupId group = this.raft.groupId();
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
		return GroupView.of(this.raft.server(), this.raft.groupId(), leads());
	}

	/**
	 * On the leader, how many milliseconds ago each other member of the group last
	 * answered it; empty on any other node ({@link Liveness}).
	 */
	Map<String, Long> heardByLeader() {
		return GroupView.heardByLeader(this.raft.server(), this.raft.groupId());
	}

	/** The log's ring as this node has applied it. */
	public Optional<Ring> logged() {
		return Optional.ofNullable(this.raft.machine().ring());
	}

	/** Called (on a Ratis thread) whenever the group's leader changes. */
	public void onLeaderChange(Runnable listener) {
		this.leaderListeners.add(listener);
	}

	/**
	 * Copies the term and vote (they change with elections): the copy follows each leader
	 * change and each first entry of a new term ({@link GroupServer#rememberTerm}), and
	 * an election no one won is covered by {@link RaftMetaGuard}'s margin (with Ratis'
	 * pre-vote, on by default, a node only starts an election a majority would join).
	 */
	private void leaderChanged() {
		this.raft.rememberTerm();
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
		return this.adoption.adopt(ring, () -> this.raft.knowGroupOf(ring));
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
		Ring ring = this.raft.machine().ring();
		RaftConfiguration conf = conf();
		Reconciled last = this.reconciled;
		if (last != null && conf != null && last.ring() == ring && last.confIndex() == conf.getLogEntryIndex()) {
			return Mono.empty();
		}
		return Mono.fromRunnable(this::reconcileNow).subscribeOn(this.scheduler).then();
	}

	private @Nullable RaftConfiguration conf() {
		RaftServer raft = this.raft.server();
		RaftGroupId group = this.raft.groupId();
		try {
			return (raft != null && group != null) ? raft.getDivision(group).getRaftConf() : null;
		}
		catch (IOException ex) {
			return null;
		}
	}

	/**
	 * The ring and configuration last found to agree: the leader's poll (every
	 * {@code poll-interval}) then skips the comparison until either changes.
	 */
	private record Reconciled(Ring ring, long confIndex) {
	}

	private void reconcileNow() {
		RaftServer raft = this.raft.server();
		RaftGroupId group = this.raft.groupId();
		Ring ring = this.raft.machine().ring();
		if (raft == null || group == null || ring == null || !leads()) {
			return;
		}
		try {
			RaftConfiguration conf = raft.getDivision(group).getRaftConf();
			if (GroupPeers.reconcile(conf, group, ring, this.state.self().id(), this.client::client)) {
				this.reconciled = new Reconciled(ring, conf.getLogEntryIndex());
			}
		}
		catch (IOException | RuntimeException ex) {
			logger.warn("Metadata group configuration not changed yet: " + ex.getMessage());
		}
	}

	/**
	 * Forms the next generation of the metadata group from this node's ring, declaring
	 * the voters {@code lost} (their ids) gone for good ({@link ForcedGeneration}).
	 */
	public Mono<Forced> forceNewGeneration(List<String> lost) {
		return ForcedGeneration.run(this.state, this.raft, this.client, lost, this.scheduler);
	}

	/**
	 * The ring a forced reconfiguration declaring {@code lost} (their ids) gone would
	 * start from; fails with an {@link IllegalStateException} saying why it would be
	 * refused. Changes nothing.
	 */
	public Mono<Ring> forceBase(List<String> lost) {
		return ForcedGeneration.base(this.state, this.raft, lost, this.scheduler);
	}

	/**
	 * What a forced reconfiguration formed.
	 *
	 * @param generation the new group's generation
	 * @param epoch the epoch of the ring it started from
	 * @param voters the new group's voters
	 * @param fenced the nodes kept out of it until removed or replaced
	 */
	public record Forced(long generation, long epoch, List<String> voters, List<String> fenced) {
	}

	@Override
	public void close() {
		this.raft.close();
	}

}
