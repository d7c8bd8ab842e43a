package io.quorumkv.service.repair;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
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
import io.quorumkv.storage.Keys;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The entry-by-entry part of a repair: the leaves where some peer differs, in chunks of
 * at most {@value #LEAVES_PER_CALL} leaves, each chunk one paced scan here and one digest
 * stream from each peer that differs in it. The scans come in key order on every node
 * (the storage contract, {@code Keys.ORDER}), so the streams are merged by key as they
 * arrive and settled in batches of keys; a repair holds about {@code max-digests} digests
 * at once whatever the number of differing entries, and reads each replica's storage once
 * per chunk (with the default 16 ranges of 4,096 leaves, once in all). Per key, the
 * versions a peer holds that may win over this node's are pulled (each distinct version
 * from one peer) and kept by this node's storage under the last-write-wins order; then
 * the winner is pushed to every replica whose version may lose to it, the replicas that
 * did not differ in that leaf included (they held this node's version). Only owners of a
 * key take part in it: a peer's digests cover the keys it shares with this node, this
 * node's own side the keys its repair covers, and a winner goes only to peers that own
 * its key. A replica that fails a call is left out from then on, and its ranges fail. Two
 * replicas whose storage orders keys differently (another backend) only cost extra pulls
 * and pushes: a key they both hold may then be settled twice, each time under the
 * last-write-wins order.
 */
final class ChunkReconciler {

	/** Leaf-level nodes asked for per digest call: the leaves of one chunk. */
	private static final int LEAVES_PER_CALL = 65_536;

	/** Digests requested ahead from each stream while merging them by key. */
	private static final int MERGE_PREFETCH = 256;

	private static final Comparator<Held> BY_KEY = Comparator.comparing((held) -> held.digest().key(), Keys.ORDER);

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

	/** The differing leaves of all peers, cut every {@value #LEAVES_PER_CALL} leaves. */
	private List<LeafSet> chunks() {
		RangeTrees shape = Objects.requireNonNull(this.local);
		List<LeafSet> chunks = new ArrayList<>();
		LeafSet chunk = new LeafSet(shape);
		int inChunk = 0;
		for (int tree = 0; tree < shape.trees().size(); tree++) {
			for (int leaf = 0; leaf < 1 << shape.tree(tree).depth(); leaf++) {
				if (!differs(tree, leaf)) {
					continue;
				}
				if (inChunk == LEAVES_PER_CALL) {
					chunks.add(chunk);
					chunk = new LeafSet(shape);
					inChunk = 0;
				}
				chunk.addLeaf(tree, leaf);
				inChunk++;
			}
		}
		if (!chunk.isEmpty()) {
			chunks.add(chunk);
		}
		return chunks;
	}

	private boolean differs(int tree, int leaf) {
		for (PeerSession peer : this.peers) {
			LeafSet leaves = peer.differingLeaves();
			if (!peer.failed() && leaves != null && peer.local != null && leaves.containsLeaf(tree, leaf)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * One chunk: this node's digests and each differing peer's, merged by key, settled in
	 * batches of keys.
	 */
	private Mono<Void> reconcile(LeafSet chunk) {
		RangeTrees shape = Objects.requireNonNull(this.local);
		String self = this.context.self().id();
		Flux<Held> mine = this.context.pacer()
			.paced(this.context.storage().scan(new byte[0], null))
			.filter((entry) -> chunk.matches(TokenRange.token(entry.key()))
					&& RangeReplicas.covers(this.owners.owners(entry.key()), self, this.scope))
			.map((entry) -> new Held(null, EntryDigest.of(entry)))
			.subscribeOn(this.context.scheduler());
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
		List<Flux<Held>> sources = new ArrayList<>();
		sources.add(mine);
		asked.forEach((peer, leaves) -> sources.add(theirs(peer, leaves)));
		int keysPerBatch = Math.max(1, this.context.settings().maxDigests() / sources.size());
		return byKey(sources).bufferUntilChanged((held) -> ByteBuffer.wrap(held.digest().key()))
			.buffer(keysPerBatch)
			.publishOn(this.context.scheduler(), 1)
			.concatMap((batch) -> settleBatch(batch, asked), 0)
			.then();
	}

	@SuppressWarnings("unchecked")
	private static Flux<Held> byKey(List<Flux<Held>> sources) {
		return Flux.mergeComparing(MERGE_PREFETCH, BY_KEY, sources.toArray(new Flux[0]));
	}

	/** The batch's digests as maps by key, this node's and each peer's, then settled. */
	private Mono<Void> settleBatch(List<List<Held>> batch, Map<PeerSession, LeafSet> asked) {
		Map<ByteBuffer, EntryDigest> mine = new HashMap<>();
		Map<PeerSession, Map<ByteBuffer, EntryDigest>> theirs = new HashMap<>();
		for (List<Held> key : batch) {
			for (Held held : key) {
				ByteBuffer wrapped = ByteBuffer.wrap(held.digest().key());
				PeerSession peer = held.peer();
				if (peer == null) {
					mine.put(wrapped, held.digest());
				}
				else {
					theirs.computeIfAbsent(peer, (p) -> new HashMap<>()).put(wrapped, held.digest());
				}
			}
		}
		return settle(mine, theirs, asked);
	}

	private Flux<Held> theirs(PeerSession peer, LeafSet leaves) {
		List<NodeRef> refs = leaves.asLeaves().stream().map(peer::toPeer).toList();
		return this.context.peers()
			.digests(peer.node, new NodesRequest(this.session, refs))
			.map((digest) -> new Held(peer, digest))
			.onErrorResume((error) -> {
				peer.fail("digests: " + error);
				return Flux.empty();
			});
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

	/** A digest and where it came from: a peer, or this node ({@code null}). */
	private record Held(@Nullable PeerSession peer, EntryDigest digest) {
	}

}
