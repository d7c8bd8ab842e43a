package io.quorumkv.service.replication;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Placement;
import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.config.QuorumKvProperties.BatchProperties;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The coordinator (DESIGN §5). Any node coordinates any request: it picks the key's
 * {@code from} replicas by placement, calls the local storage directly and the others
 * through {@link PeerClient}, all in parallel, and answers as soon as {@code ack} of them
 * succeeded, or fails as soon as {@code ack} can no longer be reached. It never waits for
 * stragglers to answer the client; their replies still arrive in the background, where
 * reads repair stale replicas ({@code read repair}) and writes keep hints for replicas
 * that failed ({@link HintStore}).
 */
public class ReplicationService {

	private static final Comparator<Entry> KEY_THEN_NEWEST = Comparator.<Entry, byte[]>comparing(Entry::key, Keys.ORDER)
		.thenComparing(EntryOrder.INSTANCE.reversed());

	private final Topology topology;

	private final Placement placement;

	private final Storage storage;

	private final HybridLogicalClock clock;

	private final PeerClient peers;

	private final HintStore hints;

	private final Semaphore repairs;

	private final Duration replicaTimeout;

	private final Metrics metrics;

	/** The local storage's deadlines, armed on the calling event loop. */
	private final EventLoopTimers timers;

	/** This node's own share of the writes it coordinates. */
	private final LocalWrites localWrites;

	/** Per peer id, when batching is on. */
	private final Map<String, PeerBatcher> batchers = new HashMap<>();

	public ReplicationService(Topology topology, Placement placement, Storage storage, HybridLogicalClock clock,
			PeerClient peers, HintStore hints, ClusterProperties cluster, int maxKeySize, MeterRegistry meters) {
		this.topology = topology;
		this.placement = placement;
		this.storage = storage;
		this.clock = clock;
		this.peers = peers;
		this.hints = hints;
		this.repairs = new Semaphore(cluster.maxConcurrentRepairs());
		this.replicaTimeout = cluster.replicaTimeout();
		this.metrics = new Metrics(meters);
		this.timers = peers.deadlines();
		BatchProperties batch = cluster.batch();
		this.localWrites = new LocalWrites(storage, this.replicaTimeout, this.timers, batch.localWrites());
		if (batch.enabled()) {
			PeerBatcher.Limits limits = new PeerBatcher.Limits(batch.maxInFlight(), batch.maxOps(),
					(int) batch.maxBytes().toBytes(), cluster.maxPendingPerPeer(), maxKeySize,
					cluster.replicaTimeout());
			for (Node peer : topology.peers()) {
				this.batchers.put(peer.id(), new PeerBatcher(peer.id(), (body) -> peers.batch(peer, body),
						(key) -> peers.get(peer, key), limits, batch.waitForTurn() ? this.timers : null, meters));
			}
		}
	}

	public int clusterSize() {
		return this.topology.size();
	}

	/**
	 * The winning entry of the key (a tombstone included); empty when no replica has it.
	 */
	public Mono<Entry> get(byte[] key, Replicas replicas) {
		List<Node> nodes = this.placement.replicas(key, replicas.from());
		return Mono.create((sink) -> {
			long start = System.nanoTime();
			QuorumRound round = new QuorumRound(replicas, (r) -> {
				this.metrics.fanOut("get", start, true);
				Entry winner = r.winner();
				if (winner != null) {
					this.clock.observe(winner.timestamp());
				}
				sink.success(winner);
			}, (r) -> lost(sink, "get", replicas, r, start), (r) -> repair(key, nodes, r));
			for (int i = 0; i < nodes.size(); i++) {
				int index = i;
				Node node = nodes.get(i);
				if (this.topology.isSelf(node)) {
					Deadline.subscribe(this.storage.get(key), this.replicaTimeout, this.timers,
							(entry) -> round.succeeded(index, Optional.ofNullable(entry)),
							(error) -> round.failed(index));
				}
				else {
					readPeer(node, key).subscribe((answer) -> round.succeeded(index, answer),
							(error) -> round.failed(index));
				}
			}
		});
	}

	/** Writes a value, or a tombstone when {@code value} is null, stamped once now. */
	public Mono<Void> write(byte[] key, byte @Nullable [] value, Replicas replicas) {
		List<Node> nodes = this.placement.replicas(key, replicas.from());
		return Mono.create((sink) -> {
			long start = System.nanoTime();
			Entry entry = new Entry(key, value, this.clock.now());
			// A write this node's own storage refused (disk full, failed storage) is
			// reported as that failure (503), not as replicas that did not answer (504).
			AtomicReference<@Nullable Throwable> localFailure = new AtomicReference<>();
			QuorumRound round = new QuorumRound(replicas, (r) -> {
				this.metrics.fanOut("write", start, true);
				sink.success();
			}, (r) -> {
				Throwable storageFailure = localFailure.get();
				if (storageFailure != null) {
					this.metrics.fanOut("write", start, false);
					sink.error(storageFailure);
				}
				else {
					lost(sink, "write", replicas, r, start);
				}
			}, (r) -> hintFailed(entry, nodes, r));
			for (int i = 0; i < nodes.size(); i++) {
				int index = i;
				Node node = nodes.get(i);
				if (this.topology.isSelf(node)) {
					this.localWrites.upsert(entry, replicas.ack() > 1, () -> round.succeeded(index, Optional.empty()),
							(error) -> {
								if (error instanceof StorageException) {
									localFailure.set(error);
								}
								round.failed(index);
							});
				}
				else {
					write(node, entry).subscribe(null, (error) -> round.failed(index),
							() -> round.succeeded(index, Optional.empty()));
				}
			}
		});
	}

	/**
	 * The live entries of a key range across the cluster, in key order: a lazy k-way
	 * merge of every node's local scan, one entry per key (the greatest), tombstones
	 * dropped.
	 */
	public Flux<Entry> range(byte[] fromInclusive, byte @Nullable [] toExclusive) {
		List<Flux<Entry>> sources = new ArrayList<>();
		for (Node node : this.topology.nodes()) {
			sources.add(this.topology.isSelf(node) ? this.storage.scan(fromInclusive, toExclusive)
					: this.peers.scan(node, fromInclusive, toExclusive)
						.onErrorMap((error) -> new ReplicaUnavailableException(node, error)));
		}
		@SuppressWarnings("unchecked")
		Flux<Entry>[] array = sources.toArray(Flux[]::new);
		return Flux.mergeComparing(KEY_THEN_NEWEST, array)
			.distinctUntilChanged((entry) -> ByteBuffer.wrap(entry.key()))
			.filter((entry) -> !entry.isTombstone());
	}

	/** A peer's entry of the key (this node's own is read through {@link Deadline}). */
	private Mono<Optional<Entry>> readPeer(Node node, byte[] key) {
		PeerBatcher batcher = this.batchers.get(node.id());
		return (batcher != null) ? batcher.get(key) : this.peers.get(node, key);
	}

	/**
	 * Writes {@code entry} to one replica: a peer, or this node's storage within the
	 * replica timeout through {@link Deadline} (only read repair comes here for it; a
	 * client write's fan-out subscribes to its local write itself).
	 */
	private Mono<Void> write(Node node, Entry entry) {
		if (this.topology.isSelf(node)) {
			return Mono.create((sink) -> Deadline.subscribe(this.storage.upsert(entry), this.replicaTimeout,
					this.timers, (ignored) -> sink.success(), sink::error));
		}
		PeerBatcher batcher = this.batchers.get(node.id());
		return (batcher != null) ? batcher.upsert(entry) : this.peers.upsert(node, entry);
	}

	private void lost(MonoSink<?> sink, String operation, Replicas replicas, QuorumRound round, long start) {
		this.metrics.fanOut(operation, start, false);
		sink.error(new QuorumNotReachedException(operation, replicas, round.successes()));
	}

	/** After every replica of a read answered: push the winner to those that lag. */
	private void repair(byte[] key, List<Node> nodes, QuorumRound round) {
		Entry winner = round.winner();
		if (winner == null) {
			return;
		}
		for (int i = 0; i < round.size(); i++) {
			Optional<Entry> answer = round.answer(i);
			if (answer == null || (answer.isPresent() && !EntryOrder.supersedes(winner, answer.get()))) {
				continue;
			}
			if (!this.repairs.tryAcquire()) {
				this.metrics.repairsSkipped.increment();
				continue;
			}
			Node node = nodes.get(i);
			write(node, winner).doFinally((signal) -> this.repairs.release())
				.subscribe(null, (error) -> this.metrics.repairsFailed.increment(),
						this.metrics.repairsPushed::increment);
		}
	}

	/** After every replica of a write answered: keep hints for the peers that failed. */
	private void hintFailed(Entry entry, List<Node> nodes, QuorumRound round) {
		for (int i = 0; i < round.size(); i++) {
			Node node = nodes.get(i);
			if (round.hasFailed(i) && !this.topology.isSelf(node)) {
				this.hints.add(node, entry).subscribe(null, (error) -> this.hints.dropped());
			}
		}
	}

	private static final class Metrics {

		private final Timer getOk;

		private final Timer getLost;

		private final Timer writeOk;

		private final Timer writeLost;

		final Counter repairsPushed;

		final Counter repairsFailed;

		final Counter repairsSkipped;

		Metrics(MeterRegistry meters) {
			this.getOk = fanOutTimer(meters, "get", "quorum");
			this.getLost = fanOutTimer(meters, "get", "timeout");
			this.writeOk = fanOutTimer(meters, "write", "quorum");
			this.writeLost = fanOutTimer(meters, "write", "timeout");
			this.repairsPushed = Counter.builder("quorumkv.repairs")
				.tag("outcome", "pushed")
				.description("Read repairs")
				.register(meters);
			this.repairsFailed = Counter.builder("quorumkv.repairs").tag("outcome", "failed").register(meters);
			this.repairsSkipped = Counter.builder("quorumkv.repairs").tag("outcome", "skipped").register(meters);
		}

		private static Timer fanOutTimer(MeterRegistry meters, String operation, String outcome) {
			return Timer.builder("quorumkv.replication.fanout")
				.description("Time from fan-out to quorum reached (or lost: answered 504)")
				.tag("op", operation)
				.tag("outcome", outcome)
				.publishPercentileHistogram()
				.register(meters);
		}

		void fanOut(String operation, long start, boolean reached) {
			Timer timer = operation.equals("get") ? (reached ? this.getOk : this.getLost)
					: (reached ? this.writeOk : this.writeLost);
			timer.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
		}

	}

}
