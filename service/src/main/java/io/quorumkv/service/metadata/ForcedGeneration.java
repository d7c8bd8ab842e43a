package io.quorumkv.service.metadata;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingNode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.retry.Retry;

/**
 * A forced reconfiguration, the way out when a majority of the metadata group's voters is
 * lost for good (like etcd's {@code --force-new-cluster}, without a consensus of its
 * own): on a surviving voter whose group has no leader, its ring (the newer of the one
 * the log applied here and the one it serves under) becomes the first ring of a new
 * group, one generation later, whose voters are the nodes the ring calls for without the
 * lost ones, which it fences ({@link io.quorumkv.service.cluster.GroupGeneration}). The
 * node adopts that ring, its Raft server starts again in the new group
 * ({@link GroupServer}), and the ring becomes the new log's first entry
 * ({@link RingFormat}); membership changes then go through the new group. Other members
 * learn the ring from this node's calls (ring exchange) and move to the new group the
 * same way.
 *
 * <p>
 * Refused (an {@link IllegalStateException}) when the group has a leader, when this node
 * is no voter, and when the voters left are a majority
 * ({@link GroupGenerations#refusal}).
 */
final class ForcedGeneration {

	private static final Log logger = LogFactory.getLog(ForcedGeneration.class);

	/** How long the new group has to elect this node and apply its first ring. */
	private static final Duration FORMED_WITHIN = Duration.ofSeconds(30);

	private ForcedGeneration() {
	}

	static Mono<MetadataGroup.Forced> run(ClusterState state, GroupServer raft, MetadataClient client,
			List<String> lost, Scheduler scheduler) {
		return Mono.fromCallable(() -> next(state, raft, lost))
			.subscribeOn(scheduler)
			.flatMap((next) -> state.install(next).thenReturn(next))
			.flatMap((next) -> formed(client, next.generation().number()).thenReturn(next))
			.map((next) -> new MetadataGroup.Forced(next.generation().number(), next.epoch(),
					GroupPeers.voters(next).stream().map(RingNode::id).toList(),
					next.generation().fenced().stream().map(RingNode::id).toList()));
	}

	/**
	 * The ring a forced reconfiguration from this node would start from, once the checks
	 * pass (an {@link IllegalStateException} saying why not): what an operator's force is
	 * checked against before it acts ({@link MetadataGroup#forceBase}).
	 */
	static Mono<Ring> base(ClusterState state, GroupServer raft, List<String> lost, Scheduler scheduler) {
		return Mono.fromCallable(() -> checkedBase(state, raft, lost)).subscribeOn(scheduler);
	}

	/** The first ring of the next generation, or why there is none. */
	private static Ring next(ClusterState state, GroupServer raft, List<String> lost) throws IOException {
		Ring base = checkedBase(state, raft, lost);
		Ring next = base.forceGeneration(lost);
		logger.warn("Forced reconfiguration: the metadata group of generation " + base.generation().number()
				+ " lost voters " + lost + " for good; generation " + next.generation().number()
				+ " starts from this node's ring at epoch " + base.epoch() + " with voters "
				+ GroupPeers.voters(next).stream().map(RingNode::id).toList() + ", fencing "
				+ next.generation().fenced().stream().map(RingNode::id).toList());
		return next;
	}

	/**
	 * The newer of the ring the log applied here and the one this node serves under, when
	 * the group has no leader, this node is a voter and the voters left are no majority.
	 */
	private static Ring checkedBase(ClusterState state, GroupServer raft, List<String> lost) throws IOException {
		RaftServer server = raft.server();
		RaftGroupId group = raft.groupId();
		if (server == null || group == null) {
			throw new IllegalStateException("this node runs no metadata group");
		}
		DivisionInfo info = server.getDivision(group).getInfo();
		RaftPeerId leader = info.getLeaderId();
		if (info.isLeader() || (leader != null && !lost.contains(leader.toString()))) {
			throw new IllegalStateException("the metadata group has a leader (" + leader
					+ "): a majority of its voters is up; take lost nodes out with remove or replace");
		}
		Ring logged = raft.machine().ring();
		Ring served = state.ring().orElse(null);
		Ring base = Optional.ofNullable(served)
			.filter((ring) -> logged == null || ring.epoch() >= logged.epoch())
			.orElse(logged);
		if (base == null) {
			throw new IllegalStateException("this node has no ring to start a group from");
		}
		String refusal = GroupGenerations.refusal(base, state.self().id(), lost);
		if (refusal != null) {
			throw new IllegalStateException(refusal);
		}
		return base;
	}

	/** Completes once the new group's log holds a ring of its generation. */
	private static Mono<Void> formed(MetadataClient client, long generation) {
		return Mono.defer(client::read)
			.flatMap((logged) -> (logged.isPresent() && logged.get().generation().number() >= generation)
					? Mono.just(logged.get()) : Mono.error(new IllegalStateException("not formed yet")))
			.retryWhen(Retry.fixedDelay(Long.MAX_VALUE, Duration.ofMillis(200)))
			.timeout(FORMED_WITHIN)
			.onErrorMap((error) -> new IllegalStateException("the ring of generation " + generation
					+ " was adopted here, but the new group did not apply it within " + FORMED_WITHIN.toSeconds()
					+ " s: " + error.getMessage(), error))
			.then();
	}

}
