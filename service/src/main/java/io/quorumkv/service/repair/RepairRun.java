package io.quorumkv.service.repair;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.repair.MerkleTree.NodeHash;
import io.quorumkv.service.repair.RepairCodec.NodeRef;
import io.quorumkv.service.repair.RepairCodec.NodesRequest;
import io.quorumkv.service.repair.RepairCodec.SessionId;
import io.quorumkv.service.repair.RepairCodec.TreesRequest;
import io.quorumkv.service.repair.RepairReport.RangeOutcome;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One repair of some ranges with all their replicas:
 * <ol>
 * <li>for each peer, this node builds its trees of the ranges over the keys both own
 * ({@link RangeReplicas#shared}), and the peer its trees over the same keys (one paced
 * scan each, at once);</li>
 * <li>per peer, the roots are compared and the repair descends, {@link #STEP} levels a
 * round, only into nodes that differ, until a differing node is a leaf or holds at most
 * {@code descend-below} entries on both sides;</li>
 * <li>the leaves under those nodes are compared entry by entry, each replica's digests
 * streamed from one scan and merged by key, in batches of {@code max-digests}
 * ({@link ChunkReconciler}): versions a peer has that may win are pulled, and the winner
 * pushed to every owner of the key that lacks it (a node that does not own a key never
 * receives it);</li>
 * <li>the peers' sessions are ended.</li>
 * </ol>
 * A range succeeds when every one of its replicas took part to the end; a replica that
 * failed fails its ranges and not the others. Every range fails when the ring changed
 * while the repair ran.
 */
final class RepairRun {

	/** Levels descended per round trip. */
	static final int STEP = 4;

	/** Nodes asked for per call. */
	private static final int NODES_PER_CALL = 16_384;

	private final RepairContext context;

	private final List<RepairRange> ranges;

	private final RangeReplicas owners;

	private final RepairService.Scope scope;

	private final SessionId session = SessionId.random();

	private final AtomicLong entriesIn = new AtomicLong();

	private final AtomicLong entriesOut = new AtomicLong();

	private final Map<Node, PeerSession> peers = new LinkedHashMap<>();

	RepairRun(RepairContext context, List<RepairRange> ranges, RangeReplicas owners, RepairService.Scope scope) {
		this.context = context;
		this.ranges = List.copyOf(ranges);
		this.owners = owners;
		this.scope = scope;
	}

	Mono<RepairReport> run() {
		RepairService.Scope scope = this.scope;
		long start = System.nanoTime();
		long epoch = this.owners.ring().epoch();
		List<TokenRange> tokens = this.ranges.stream().map(RepairRange::tokens).toList();
		int depth = this.context.settings().depth();
		for (RepairRange range : this.ranges) {
			for (Node node : range.replicas()) {
				if (!node.equals(this.context.self())) {
					this.peers.computeIfAbsent(node, (peer) -> new PeerSession(peer, this.ranges));
				}
			}
		}
		String self = this.context.self().id();
		// Per peer, this node's trees of the keys both own, all from one scan of this
		// node's storage (one scan per peer read it once for each), compared with the
		// peer's as they arrive.
		Map<Node, Predicate<byte[]>> shared = new LinkedHashMap<>();
		this.peers.keySet().forEach((node) -> shared.put(node, this.owners.shared(self, node.id(), scope)));
		Mono<Map<Node, RangeTrees>> local = RangeTrees
			.build(this.context.storage(), tokens, depth, shared, this.context.pacer(), this.context.scheduler())
			.cache();
		return Flux.fromIterable(this.peers.values())
			.flatMap((peer) -> compare(peer, local.map((all) -> all.get(peer.node)), tokens, depth))
			.then(Mono.defer(() -> new ChunkReconciler(this.context, this.session, List.copyOf(this.peers.values()),
					this.entriesIn, this.entriesOut, this.owners, scope)
				.run()))
			.then(Mono.defer(this::endSessions))
			.onErrorResume((error) -> endSessions().then(Mono.error(error)))
			.then(Mono.fromSupplier(() -> {
				RangeReplicas.RingState now = this.owners.ring();
				if (now.epoch() != epoch || now.changing()) {
					// What was compared may not be what the ring now places: record
					// nothing.
					this.peers.values()
						.forEach((peer) -> peer
							.fail("the ring changed during the repair (epoch " + epoch + " -> " + now.epoch() + ")"));
				}
				return new RepairReport(scope, outcomes(), this.entriesIn.get(), this.entriesOut.get(),
						Duration.ofNanos(System.nanoTime() - start));
			}));
	}

	/** The peer's trees, then the descent into what differs; failures mark the peer. */
	private Mono<Void> compare(PeerSession peer, Mono<RangeTrees> trees, List<TokenRange> tokens, int depth) {
		List<TokenRange> held = peer.localTrees.stream().map(tokens::get).toList();
		return Mono
			.zip(trees, this.context.peers().trees(peer.node, new TreesRequest(this.session, depth, held), this.scope))
			.publishOn(this.context.scheduler())
			.flatMap((both) -> {
				RangeTrees local = both.getT1();
				peer.local = local;
				List<NodeHash> roots = both.getT2();
				peer.differing(local);
				if (roots.size() != held.size()) {
					return Mono.error(new IllegalStateException(
							peer.node + " answered " + roots.size() + " roots for " + held.size() + " ranges"));
				}
				peer.roots = roots;
				List<Pending> frontier = new ArrayList<>();
				for (int i = 0; i < held.size(); i++) {
					frontier.add(new Pending(new NodeRef(peer.localTrees.get(i), 0, 0), roots.get(i)));
				}
				return descend(peer, local, frontier, depth);
			})
			.onErrorResume((error) -> {
				peer.fail(error.toString());
				return Mono.empty();
			});
	}

	/**
	 * One round: the frontier's nodes that differ are either compared entry by entry
	 * (recorded in the peer's differing leaves) or descended into.
	 */
	private Mono<Void> descend(PeerSession peer, RangeTrees local, List<Pending> frontier, int depth) {
		List<NodeRef> next = new ArrayList<>();
		for (Pending pending : frontier) {
			NodeRef ref = pending.ref();
			NodeHash mine = local.tree(ref.tree()).node(ref.level(), ref.index());
			if (mine.sameAs(pending.theirs())) {
				continue;
			}
			peer.differed[ref.tree()] = true;
			if (ref.level() == depth
					|| Math.max(mine.count(), pending.theirs().count()) <= this.context.settings().descendBelow()) {
				peer.differing(local).add(ref);
				peer.estimate(ref, depth, pending.theirs().count());
				continue;
			}
			int step = Math.min(STEP, depth - ref.level());
			for (int child = 0; child < 1 << step; child++) {
				next.add(new NodeRef(ref.tree(), ref.level() + step, (ref.index() << step) + child));
			}
		}
		if (next.isEmpty()) {
			return Mono.empty();
		}
		List<List<NodeRef>> calls = new ArrayList<>();
		for (int from = 0; from < next.size(); from += NODES_PER_CALL) {
			calls.add(next.subList(from, Math.min(next.size(), from + NODES_PER_CALL)));
		}
		return Flux.fromIterable(calls)
			.concatMap((refs) -> this.context.peers()
				.nodes(peer.node, new NodesRequest(this.session, refs.stream().map(peer::toPeer).toList()))
				.flatMapIterable((hashes) -> {
					if (hashes.size() != refs.size()) {
						throw new IllegalStateException(
								peer.node + " answered " + hashes.size() + " hashes for " + refs.size() + " nodes");
					}
					List<Pending> answered = new ArrayList<>(refs.size());
					for (int i = 0; i < refs.size(); i++) {
						answered.add(new Pending(refs.get(i), hashes.get(i)));
					}
					return answered;
				}))
			.collectList()
			.publishOn(this.context.scheduler())
			.flatMap((answered) -> descend(peer, local, answered, depth));
	}

	private Mono<Void> endSessions() {
		// A peer that never built the session ignores its end.
		return Flux.fromIterable(this.peers.values())
			.flatMap((peer) -> this.context.peers().end(peer.node, this.session).onErrorComplete())
			.then();
	}

	private List<RangeOutcome> outcomes() {
		List<RangeOutcome> outcomes = new ArrayList<>(this.ranges.size());
		for (int i = 0; i < this.ranges.size(); i++) {
			RepairRange range = this.ranges.get(i);
			boolean differed = false;
			String failure = null;
			for (PeerSession peer : this.peers.values()) {
				if (peer.holds(i)) {
					differed |= peer.differed[i];
					if (peer.failed() && failure == null) {
						failure = peer.node + ": " + peer.failure();
					}
				}
			}
			outcomes.add(new RangeOutcome(range.index(), range.tokens(), differed, failure));
		}
		return outcomes;
	}

	/** A node to compare: this node's numbering, and the peer's hash of it. */
	private record Pending(NodeRef ref, NodeHash theirs) {
	}

}
