package io.quorumkv.service.repair;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.repair.RepairCodec.NodeRef;
import io.quorumkv.service.repair.RepairCodec.NodesRequest;
import io.quorumkv.service.repair.RepairCodec.SessionId;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The entry-by-entry part of a repair: the leaves where some peer differs, in chunks of
 * at most {@code max-digests} entries (estimated from the trees' counts), each chunk one
 * paced scan here and one digest stream from each peer that differs in it. Per key, the
 * versions a peer holds that may win over this node's are pulled (each distinct version
 * from one peer) and kept by this node's storage under the last-write-wins order; then
 * the winner is pushed to every replica whose version may lose to it, the replicas that
 * did not differ in that leaf included (they held this node's version). Only owners of a
 * key take part in it: a peer's digests cover the keys it shares with this node, this
 * node's own side the keys its repair covers, and a winner goes only to peers that own
 * its key. A replica that fails a call is left out from then on, and its ranges fail.
 */
final class ChunkReconciler {

	/** Leaf-level nodes asked for per digest call. */
	private static final int LEAVES_PER_CALL = 65_536;

	private static final int READ_CONCURRENCY = 32;

	private final RepairContext context;

	private final SessionId session;

	/**
	 * The shape of the trees (the same ranges and depth for every peer): which leaf a
	 * token falls in. Null when no peer's trees were built.
	 */
	private final @Nullable RangeTrees local;

	private final List<PeerSession> peers;

	private final AtomicLong entriesIn;

	private final AtomicLong entriesOut;

	private final RangeReplicas owners;

	private final RepairService.Scope scope;

	ChunkReconciler(RepairContext context, SessionId session, List<PeerSession> peers, AtomicLong entriesIn,
			AtomicLong entriesOut, RangeReplicas owners, RepairService.Scope scope) {
		this.context = context;
		this.session = session;
		this.local = peers.stream().map((peer) -> peer.local).filter(Objects::nonNull).findFirst().orElse(null);
		this.peers = peers;
		this.entriesIn = entriesIn;
		this.entriesOut = entriesOut;
		this.owners = owners;
		this.scope = scope;
	}

	Mono<Void> run() {
		return (this.local != null) ? Flux.fromIterable(chunks()).concatMap(this::reconcile).then() : Mono.empty();
	}

	private boolean owns(PeerSession peer, List<String> owners) {
		return owners.contains(peer.node.id());
	}

	/**
	 * The differing leaves of all peers, cut where the estimated entries pass the cap.
	 */
	private List<LeafSet> chunks() {
		RangeTrees shape = Objects.requireNonNull(this.local);
		List<LeafSet> chunks = new ArrayList<>();
		LeafSet chunk = new LeafSet(shape);
		long inChunk = 0;
		for (int tree = 0; tree < shape.trees().size(); tree++) {
			int depth = shape.tree(tree).depth();
			for (int leaf = 0; leaf < 1 << depth; leaf++) {
				boolean differs = false;
				long estimate = 1;
				for (PeerSession peer : this.peers) {
					LeafSet leaves = peer.differingLeaves();
					RangeTrees mine = peer.local;
					if (!peer.failed() && leaves != null && mine != null && leaves.containsLeaf(tree, leaf)) {
						differs = true;
						estimate = Math.max(estimate,
								Math.max(mine.tree(tree).node(depth, leaf).count(), peer.estimate(tree, leaf)));
					}
				}
				if (!differs) {
					continue;
				}
				if (inChunk > 0 && inChunk + estimate > this.context.settings().maxDigests()) {
					chunks.add(chunk);
					chunk = new LeafSet(shape);
					inChunk = 0;
				}
				chunk.addLeaf(tree, leaf);
				inChunk += estimate;
			}
		}
		if (!chunk.isEmpty()) {
			chunks.add(chunk);
		}
		return chunks;
	}

	private Mono<Void> reconcile(LeafSet chunk) {
		RangeTrees shape = Objects.requireNonNull(this.local);
		String self = this.context.self().id();
		Mono<Map<ByteBuffer, EntryDigest>> mine = digestsOf(this.context.pacer()
			.paced(this.context.storage().scan(new byte[0], null))
			.filter((entry) -> chunk.matches(TokenRange.token(entry.key()))
					&& RangeReplicas.covers(this.owners.owners(entry.key()), self, this.scope))
			.map(EntryDigest::of)
			.subscribeOn(this.context.scheduler()));
		Map<PeerSession, LeafSet> asked = new LinkedHashMap<>();
		for (PeerSession peer : this.peers) {
			LeafSet leaves = peer.differingLeaves();
			if (!peer.failed() && leaves != null) {
				LeafSet both = new LeafSet(shape);
				for (NodeRef leaf : chunk.asLeaves()) {
					if (leaves.containsLeaf(leaf.tree(), leaf.index())) {
						both.addLeaf(leaf.tree(), leaf.index());
					}
				}
				if (!both.isEmpty()) {
					asked.put(peer, both);
				}
			}
		}
		return Flux.fromIterable(asked.entrySet())
			.flatMap((ask) -> theirs(ask.getKey(), ask.getValue()).map((digests) -> Map.entry(ask.getKey(), digests)))
			.collectMap(Map.Entry::getKey, Map.Entry::getValue)
			.zipWith(mine)
			.publishOn(this.context.scheduler())
			.flatMap((both) -> settle(both.getT2(), both.getT1(), asked));
	}

	private Mono<Map<ByteBuffer, EntryDigest>> theirs(PeerSession peer, LeafSet leaves) {
		List<NodeRef> refs = leaves.asLeaves().stream().map(peer::toPeer).toList();
		List<List<NodeRef>> calls = new ArrayList<>();
		for (int from = 0; from < refs.size(); from += LEAVES_PER_CALL) {
			calls.add(refs.subList(from, Math.min(refs.size(), from + LEAVES_PER_CALL)));
		}
		return digestsOf(Flux.fromIterable(calls)
			.concatMap((call) -> this.context.peers().digests(peer.node, new NodesRequest(this.session, call))))
			.onErrorResume((error) -> {
				peer.fail("digests: " + error);
				return Mono.just(Map.of());
			});
	}

	private static Mono<Map<ByteBuffer, EntryDigest>> digestsOf(Flux<EntryDigest> digests) {
		return digests.collect(HashMap::new, (map, digest) -> map.put(ByteBuffer.wrap(digest.key()), digest));
	}

	/** Pulls what may win here, then pushes the winners where they are missing. */
	private Mono<Void> settle(Map<ByteBuffer, EntryDigest> mine, Map<PeerSession, Map<ByteBuffer, EntryDigest>> theirs,
			Map<PeerSession, LeafSet> asked) {
		Map<PeerSession, List<byte[]>> pulls = new LinkedHashMap<>();
		List<ByteBuffer> unsettled = new ArrayList<>();
		Set<ByteBuffer> keys = new java.util.HashSet<>(mine.keySet());
		theirs.values().forEach((digests) -> keys.addAll(digests.keySet()));
		for (ByteBuffer key : keys) {
			EntryDigest own = mine.get(key);
			List<String> owners = this.owners.owners(key.array());
			List<EntryDigest> pulled = new ArrayList<>();
			boolean differs = false;
			for (Map.Entry<PeerSession, LeafSet> ask : asked.entrySet()) {
				if (ask.getKey().failed() || !ask.getValue().matches(TokenRange.token(key.array()))
						|| !owns(ask.getKey(), owners)) {
					continue;
				}
				EntryDigest their = theirs.getOrDefault(ask.getKey(), Map.of()).get(key);
				differs |= (their == null) ? own != null : own == null || !own.sameVersion(their);
				if (their != null && (own == null || own.mayLoseTo(their))
						&& pulled.stream().noneMatch(their::sameVersion)) {
					pulled.add(their);
					pulls.computeIfAbsent(ask.getKey(), (peer) -> new ArrayList<>()).add(key.array());
				}
			}
			if (differs) {
				unsettled.add(key);
			}
		}
		return Flux.fromIterable(pulls.entrySet())
			.concatMap((pull) -> pull(pull.getKey(), pull.getValue()))
			.collectList()
			.flatMap((entries) -> this.context.storage()
				.upsertAll(entries)
				.doOnSuccess((ignored) -> this.entriesIn.addAndGet(entries.size())))
			.then(push(unsettled, mine, theirs, asked));
	}

	private Flux<Entry> pull(PeerSession peer, List<byte[]> keys) {
		return this.context.peers()
			.pull(peer.node, keys)
			.filter((entry) -> this.context.clock().admit(entry.timestamp(), ClockGuard.Source.REPAIR, peer.node.id()))
			.onErrorResume((error) -> {
				peer.fail("pull: " + error);
				return Flux.empty();
			});
	}

	private Mono<Void> push(List<ByteBuffer> keys, Map<ByteBuffer, EntryDigest> mine,
			Map<PeerSession, Map<ByteBuffer, EntryDigest>> theirs, Map<PeerSession, LeafSet> asked) {
		return Flux.fromIterable(keys)
			.flatMapSequential((key) -> this.context.storage().get(key.array()), READ_CONCURRENCY)
			.collectList()
			.flatMap((winners) -> {
				Map<PeerSession, List<Entry>> pushes = new LinkedHashMap<>();
				for (Entry winner : winners) {
					ByteBuffer key = ByteBuffer.wrap(winner.key());
					EntryDigest best = EntryDigest.of(winner);
					long token = TokenRange.token(winner.key());
					int tree = Objects.requireNonNull(this.local).find(token);
					List<String> owners = this.owners.owners(winner.key());
					for (PeerSession peer : this.peers) {
						if (peer.failed() || tree < 0 || !peer.holds(tree) || !owns(peer, owners)) {
							continue;
						}
						LeafSet leaves = asked.get(peer);
						// A peer that did not differ in this leaf holds this node's old
						// version.
						@Nullable EntryDigest their = (leaves != null && leaves.matches(token))
								? theirs.getOrDefault(peer, Map.of()).get(key) : mine.get(key);
						if (their == null || their.mayLoseTo(best)) {
							pushes.computeIfAbsent(peer, (p) -> new ArrayList<>()).add(winner);
						}
					}
				}
				return Flux.fromIterable(pushes.entrySet())
					.flatMap((push) -> this.context.peers()
						.push(push.getKey().node, push.getValue())
						.doOnNext(this.entriesOut::addAndGet)
						.onErrorResume((error) -> {
							push.getKey().fail("push: " + error);
							return Mono.empty();
						}))
					.then();
			});
	}

}
