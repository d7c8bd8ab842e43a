package io.quorumkv.service.repair;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.function.Predicate;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.peer.Pacer;
import io.quorumkv.service.repair.MerkleTree.NodeHash;
import io.quorumkv.service.repair.RepairCodec.NodeRef;
import io.quorumkv.service.repair.RepairCodec.NodesRequest;
import io.quorumkv.service.repair.RepairCodec.SessionId;
import io.quorumkv.service.repair.RepairCodec.TreesRequest;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageOverloadedException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A node's side of its peers' repairs: it builds its trees of the ranges a repair asks
 * for (one scan, paced), keeps them for the session's later calls, answers the hashes of
 * the nodes the repair descends into and streams the digests of the entries under the
 * nodes that still differ. At most {@code quorumkv.repair.max-served-sessions} sessions
 * at once (more are answered 503); a session idle for
 * {@code quorumkv.repair.session-timeout} is dropped.
 */
public final class RepairSessions {

	private final Storage storage;

	private final RepairSettings settings;

	private final Pacer pacer;

	private final Scheduler scheduler;

	private final RepairHistory history;

	private final RangeReplicas ranges;

	private final String self;

	private final Map<SessionId, Session> sessions = new ConcurrentHashMap<>();

	private final Semaphore slots;

	RepairSessions(Storage storage, RepairSettings settings, Pacer pacer, Scheduler scheduler, RepairHistory history,
			RangeReplicas ranges, String self, MeterRegistry meters) {
		this.storage = storage;
		this.ranges = ranges;
		this.self = self;
		this.settings = settings;
		this.pacer = pacer;
		this.scheduler = scheduler;
		this.history = history;
		this.slots = new Semaphore(settings.maxServedSessions());
		Gauge.builder("quorumkv.repair.sessions.served", this.sessions, Map::size)
			.description("Repair sessions this node keeps trees for, for its peers")
			.register(meters);
	}

	/**
	 * Builds the session's trees and answers their roots ({@code POST .../trees}): over
	 * the keys this node and the repairing node ({@code repairer}, its id) both own, in
	 * scope {@code PRIMARY} only those the repairer is the primary of; refused while a
	 * membership change is under way.
	 */
	public Mono<byte[]> trees(byte[] body, String repairer, RepairService.Scope scope) {
		return Mono.defer(() -> {
			TreesRequest request = RepairCodec.trees(body);
			String refusal = this.ranges.ring().refusal();
			if (refusal != null) {
				return Mono.error(new RepairService.RepairRefusedException(refusal));
			}
			Predicate<byte[]> keep = this.ranges.shared(repairer, this.self, scope);
			expireIdle();
			if (request.depth() > this.settings.depth()) {
				// Memory: a node builds no deeper trees than its own settings say.
				throw new RepairCodec.MalformedRepairException("tree depth " + request.depth()
						+ " is over this node's quorumkv.repair.leaves-per-range (depth " + this.settings.depth()
						+ ")");
			}
			if (!this.slots.tryAcquire()) {
				return Mono.error(new StorageOverloadedException(
						"repair sessions: " + this.settings.maxServedSessions() + " served already"));
			}
			return RangeTrees.build(this.storage, request.ranges(), request.depth(), keep, this.pacer, this.scheduler)
				.map((trees) -> {
					Session replaced = this.sessions.put(request.session(), new Session(trees, keep));
					if (replaced != null) {
						this.slots.release();
					}
					List<NodeHash> roots = new ArrayList<>(trees.trees().size());
					trees.trees().forEach((tree) -> roots.add(tree.node(0, 0)));
					return RepairCodec.hashes(roots);
				})
				.doOnError((error) -> this.slots.release())
				.doOnCancel(this.slots::release);
		});
	}

	/** The hashes of the nodes asked for ({@code POST .../nodes}). */
	public byte[] nodes(byte[] body) {
		NodesRequest request = RepairCodec.nodes(body);
		RangeTrees trees = session(request.session()).trees();
		List<NodeHash> hashes = new ArrayList<>(request.nodes().size());
		for (NodeRef ref : request.nodes()) {
			if (ref.tree() < 0 || ref.tree() >= trees.trees().size()) {
				throw new RepairCodec.MalformedRepairException("no tree " + ref.tree() + " in the session");
			}
			try {
				hashes.add(trees.tree(ref.tree()).node(ref.level(), ref.index()));
			}
			catch (IllegalArgumentException ex) {
				throw new RepairCodec.MalformedRepairException(ex.getMessage());
			}
		}
		return RepairCodec.hashes(hashes);
	}

	/**
	 * The digests of this node's entries under the nodes asked for, in key order
	 * ({@code POST .../digests}): one paced scan.
	 */
	public Flux<byte[]> digests(byte[] body) {
		return Flux.defer(() -> {
			NodesRequest request = RepairCodec.nodes(body);
			Session session = session(request.session());
			LeafSet leaves = LeafSet.of(session.trees(), request.nodes());
			return this.pacer.paced(this.storage.scan(new byte[0], null))
				.filter((entry) -> leaves.matches(TokenRange.token(entry.key())) && session.keep().test(entry.key()))
				.map((entry) -> RepairCodec.digest(EntryDigest.of(entry)))
				.subscribeOn(this.scheduler);
		});
	}

	/** Drops a session ({@code DELETE .../session?id=}); unknown ones are ignored. */
	public void end(String id) {
		Session session = this.sessions.remove(SessionId.parse(id));
		if (session != null) {
			this.slots.release();
		}
	}

	/**
	 * Records that a repair by {@code repairer} (its id) in {@code scope} reaching every
	 * replica of the ranges succeeded ({@code POST .../done}); written to disk off the
	 * caller's thread.
	 */
	public Mono<Void> done(byte[] body, String repairer, RepairService.Scope scope) {
		return Mono.fromRunnable(() -> {
			RepairCodec.Done done = RepairCodec.done(body);
			this.history.record(done.ranges(), repairer, scope, done.repairedAt());
		}).subscribeOn(this.scheduler).then();
	}

	private Session session(SessionId id) {
		Session session = this.sessions.get(id);
		if (session == null) {
			throw new UnknownSessionException("no repair session " + id.hex() + " here (expired, or never built)");
		}
		session.touch();
		return session;
	}

	private void expireIdle() {
		long limit = System.nanoTime() - this.settings.sessionTimeout().toNanos();
		this.sessions.forEach((id, session) -> {
			if (session.lastUsed() < limit && this.sessions.remove(id, session)) {
				this.slots.release();
			}
		});
	}

	/** A session this node does not (or no longer) keep; answered 404. */
	public static final class UnknownSessionException extends RuntimeException {

		UnknownSessionException(String message) {
			super(message, null, false, false);
		}

	}

	private static final class Session {

		private final RangeTrees trees;

		private final Predicate<byte[]> keep;

		private volatile long lastUsed = System.nanoTime();

		Session(RangeTrees trees, Predicate<byte[]> keep) {
			this.trees = trees;
			this.keep = keep;
		}

		RangeTrees trees() {
			return this.trees;
		}

		Predicate<byte[]> keep() {
			return this.keep;
		}

		long lastUsed() {
			return this.lastUsed;
		}

		void touch() {
			this.lastUsed = System.nanoTime();
		}

	}

}
