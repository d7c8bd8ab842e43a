package io.quorumkv.service.metadata;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
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
 * This node's Raft server of the metadata group, run under the group the node's ring
 * calls for ({@link GroupGenerations#groupId}): started once the node's routes answer,
 * started again when that group changes (a forced reconfiguration formed the next
 * generation) or the node's id does (a replacement takes the dead node's id), and
 * stopped. Each start has a state machine of its own (Ratis initializes one once), and
 * first moves the folders of other groups out of {@code raft/}. A node without a ring (a
 * newcomer), or one its ring fences, starts a server of no group.
 */
final class GroupServer {

	private static final Log logger = LogFactory.getLog(MetadataGroup.class);

	/** The file of the two-phase commit of ring changes that the log replaced. */
	static final String AGREEMENT_FILE = "ring-agreement";

	private final ClusterState state;

	private final RaftTransport transport;

	private final RaftEndpoint endpoint;

	private final Scheduler scheduler;

	private final Path folder;

	private final MeterRegistry meters;

	/** Keeps Ratis' term and vote recoverable after a failed write of them. */
	private final RaftMetaGuard metaGuard;

	private final Supplier<RingStateMachine> machines;

	private final MetadataClient client;

	private final MetadataTiming settings;

	private volatile RingStateMachine machine;

	private volatile @Nullable RaftServer server;

	private volatile @Nullable RaftGroupId groupId;

	/** The id the Raft server runs under, while it runs. */
	private volatile @Nullable String exportedAs;

	private volatile @Nullable Disposable formatting;

	private volatile boolean watching;

	private volatile boolean closed;

	GroupServer(ClusterState state, RaftTransport transport, RaftEndpoint endpoint, Scheduler scheduler,
			Path dataFolder, MetadataTiming settings, MeterRegistry meters, Supplier<RingStateMachine> machines,
			MetadataClient client) {
		this.state = state;
		this.transport = transport;
		this.endpoint = endpoint;
		this.scheduler = scheduler;
		this.folder = dataFolder.resolve("raft");
		this.settings = settings;
		this.meters = meters;
		this.metaGuard = new RaftMetaGuard(this.folder, dataFolder.resolve("raft-meta-copy"));
		this.machines = machines;
		this.machine = machines.get();
		this.client = client;
	}

	Path folder() {
		return this.folder;
	}

	MetadataTiming settings() {
		return this.settings;
	}

	@Nullable RaftServer server() {
		return this.server;
	}

	@Nullable RaftGroupId groupId() {
		return this.groupId;
	}

	RingStateMachine machine() {
		return this.machine;
	}

	/** A node given its group by the leader learns its id from the first ring applied. */
	void knowGroupOf(Ring ring) {
		if (this.groupId == null) {
			this.groupId = GroupGenerations.groupId(ring);
		}
	}

	/** Copies the term and vote (see {@link RaftMetaGuard}). */
	void rememberTerm() {
		this.scheduler.schedule(this.metaGuard::remember);
	}

	/** Starts the Raft server (once the node's routes answer). */
	synchronized void start() throws IOException {
		if (this.server != null || this.closed) {
			return;
		}
		forgetAgreementFile();
		Ring ring = this.state.ring().orElse(null);
		String self = this.state.self().id();
		boolean fenced = ring != null && GroupGenerations.fenced(ring, self);
		this.machine = this.machines.get();
		this.exportedAs = self;
		RaftMetrics.export(self, this.meters);
		RaftServer.Builder builder = RaftServer.newBuilder()
			.setServerId(RaftPeerId.valueOf(self))
			.setProperties(RaftSetup.properties(this.folder, this.settings))
			.setParameters(HttpRpcType.parameters(this.transport, this.state.self().address()))
			.setStateMachine(this.machine)
			.setOption(RaftStorage.StartupOption.RECOVER);
		if (ring != null) {
			RaftGroupId group = GroupGenerations.groupId(ring);
			GroupGenerations.retireOthers(this.folder, group);
			this.groupId = group;
			if (!fenced) {
				builder.setGroup(RaftGroup.valueOf(group, GroupPeers.peers(ring)));
			}
		}
		this.metaGuard.repair();
		RaftServer raft = builder.build();
		this.endpoint.serve(raft);
		raft.start();
		this.server = raft;
		this.metaGuard.remember();
		if (fenced) {
			logger.warn("Metadata group not joined: this node was a voter the forced reconfiguration of generation "
					+ ring.generation().number() + " declared lost, and is kept out of the group until a remove or "
					+ "replace takes its place (docs/membership.md)");
		}
		else {
			logger.info("Metadata group started" + ((ring != null)
					? " for cluster " + ring.clusterId()
							+ ((ring.generation().number() > 0) ? " (generation " + ring.generation().number() + ")"
									: "")
							+ ", voters " + GroupPeers.voters(ring).stream().map(RingNode::id).toList()
					: " without a group (waiting to be joined)"));
			if (ring != null) {
				this.formatting = RingFormat.start(this.state, this.client, this.scheduler);
			}
		}
		if (!this.watching) {
			this.watching = true;
			this.state.onChange(this::restartIfMoved);
		}
	}

	/**
	 * Starts the Raft server again when the node's ring moved it: to another id (a new
	 * node that replaces a dead one takes the dead node's id with its first ring, and the
	 * group knows it by that id) or to another group (the next generation).
	 */
	private void restartIfMoved(Ring adopted) {
		RaftServer running = this.server;
		if (running == null) {
			return;
		}
		boolean newId = !running.getId().toString().equals(this.state.self().id());
		RaftGroupId group = this.groupId;
		boolean newGroup = group != null && !group.equals(GroupGenerations.groupId(adopted));
		if (!newId && !newGroup) {
			return;
		}
		Mono.fromRunnable(() -> {
			synchronized (this) {
				if (this.closed) {
					return;
				}
				logger.info(newId
						? "This node took the id " + this.state.self().id()
								+ " of the node it replaces: its Raft server starts again under it"
						: "The ring moved to metadata generation " + adopted.generation().number()
								+ ": the Raft server starts again in that generation's group");
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
		if (Files.deleteIfExists(old)) {
			logger.info("Deleted " + old + ", the state of the two-phase commit that ring changes used before the "
					+ "metadata log");
		}
	}

	synchronized void close() {
		this.closed = true;
		stop();
	}

	private synchronized void stop() {
		Disposable format = this.formatting;
		if (format != null) {
			format.dispose();
			this.formatting = null;
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
