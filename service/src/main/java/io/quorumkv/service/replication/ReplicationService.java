package io.quorumkv.service.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.NotServingException;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.peer.StaleRingException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Expiry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.StorageException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The coordinator. Any node coordinates any request: it picks the key's {@code from}
 * replicas by placement and calls them all in parallel, its own copy like the others
 * ({@link Replica}), and answers as soon as {@code ack} of them succeeded, or fails as
 * soon as {@code ack} can no longer be reached. It never waits for stragglers to answer
 * the client; their replies still arrive in the background, where reads repair stale
 * replicas (read repair) and failed writes leave hints ({@link HintStore}).
 *
 * <p>
 * A write with a time to live carries an absolute expiry: its timestamp plus the time to
 * live, stamped once here. Reads judge expiry by this node's clock
 * ({@link HybridLogicalClock#current()}) as well as each replica's: an entry expired by
 * either reads as the tombstone of its timestamp. Read repair pushes the winning entry as
 * the replicas hold it, expiry included.
 */
public class ReplicationService {

	/** The longest a request lost to a newer ring waits for it before its second try. */
	private static final Duration NEWER_RING_WAIT = Duration.ofSeconds(1);

	/**
	 * The longest a request to a node restarted moments ago waits for the metadata group
	 * to confirm its ring (ClusterState#confirmed) before it is refused (503).
	 */
	private static final Duration CONFIRMATION_WAIT = Duration.ofSeconds(3);

	private final ClusterState cluster;

	private final HybridLogicalClock clock;

	/** Every node's replica, this node's own included. */
	private final ReplicaDirectory replicas;

	private final ReadRepair readRepair;

	private final FanOutTimers fanOut;

	private final ScanProperties scan;

	ReplicationService(ClusterState cluster, ReplicaDirectory replicas, HybridLogicalClock clock,
			int maxConcurrentRepairs, ScanProperties scan, MeterRegistry meters) {
		this.cluster = cluster;
		this.clock = clock;
		this.replicas = replicas;
		this.readRepair = new ReadRepair(replicas, maxConcurrentRepairs, meters);
		this.scan = scan;
		this.fanOut = new FanOutTimers(meters);
	}

	/**
	 * How many nodes hold each key: the default and the largest {@code from}.
	 * @throws NotServingException when this node has no ring
	 */
	public int replicationFactor() {
		return this.cluster.memberLayout().replicationFactor();
	}

	/**
	 * The winning entry of the key (a tombstone included, an expired value as its
	 * tombstone); empty when no replica has it.
	 */
	public Mono<Entry> get(byte[] key, Replicas replicas) {
		return onNewerRing((last) -> get(key, replicas, last));
	}

	private Mono<Entry> get(byte[] key, Replicas replicas, boolean last) {
		return Mono.create((sink) -> {
			RingLayout layout = this.cluster.servingLayout();
			Targets targets = layout.reads(key, replicas.from());
			long start = System.nanoTime();
			AtomicBoolean refusedAsStale = new AtomicBoolean();
			boolean everyReplica = replicas.ack() == replicas.from();
			layout.inFlight().incrementAndGet();
			QuorumRound round = new QuorumRound(replicas.ack(), targets, (r) -> {
				layout.inFlight().decrementAndGet();
				this.fanOut.record("get", start, true);
				Entry winner = r.winner();
				if (winner != null) {
					this.clock.observe(winner.timestamp());
					winner = winner.asSeenAt(this.clock.current());
				}
				sink.success(winner);
			}, (r) -> {
				layout.inFlight().decrementAndGet();
				lost(sink, "get", replicas, r, start, (!last && refusedAsStale.get()) ? layout : null);
			}, (r) -> this.readRepair.repair(targets, r));
			for (int i = 0; i < targets.size(); i++) {
				int index = i;
				if (targets.is(i, Targets.UNREADABLE)) {
					round.failed(index, targets.nodes().get(i) + ": not readable under the ring being changed");
					continue;
				}
				Replica replica = this.replicas.of(targets.nodes().get(i));
				replica.get(key, everyReplica, (answer) -> round.succeeded(index, answer), (error) -> {
					refusedAsStale.compareAndSet(false, error instanceof StaleRingException);
					round.failed(index, QuorumRound.failure(replica, error));
				});
			}
		});
	}

	/**
	 * Writes a value, or a tombstone when {@code value} is null, stamped once now, to the
	 * key's owners: while the key moves, to its old and its new owners, confirmed by
	 * {@code ack} of each ({@link QuorumRound}). Keeps the arrays themselves, as the
	 * method below says.
	 */
	public Mono<Void> write(byte[] key, byte @Nullable [] value, Replicas replicas) {
		return write(key, value, 0, replicas);
	}

	/**
	 * Writes a value that expires {@code ttlSeconds} after its timestamp (never when 0),
	 * or a tombstone when {@code value} is null; stamped once now, the expiry with it,
	 * and sent to the key's owners as {@link #write(byte[], byte[], Replicas)} does. The
	 * entry keeps {@code key} and {@code value} themselves ({@link Entry#wrap}): the
	 * caller (a request's handler, whose arrays they are) must not change them.
	 */
	public Mono<Void> write(byte[] key, byte @Nullable [] value, long ttlSeconds, Replicas replicas) {
		if (ttlSeconds < 0 || (value == null && ttlSeconds != 0)) {
			throw new IllegalArgumentException("a time to live is positive, and for a value only");
		}
		return Mono.defer(() -> {
			long stamp = this.clock.now();
			Entry entry = Entry.wrap(key, value, stamp,
					(ttlSeconds > 0) ? Expiry.after(stamp, ttlSeconds) : Entry.NO_EXPIRY);
			return onNewerRing((last) -> write(entry, replicas, last));
		});
	}

	/**
	 * Writes {@code entry} as it is, its timestamp and expiry kept, to the key's owners
	 * as {@link #write(byte[], byte[], Replicas)} does: how a restore puts back the
	 * versions of a snapshot (an older version than a replica holds changes nothing
	 * there).
	 */
	public Mono<Void> write(Entry entry, Replicas replicas) {
		return onNewerRing((last) -> write(entry, replicas, last));
	}

	/**
	 * Sends one stamped entry to its owners; sent again (the same entry, so the same
	 * outcome on a replica that already has it) when a first try was lost to a newer
	 * ring.
	 */
	private Mono<Void> write(Entry entry, Replicas replicas, boolean last) {
		return Mono.create((sink) -> {
			RingLayout layout = this.cluster.servingLayout();
			Targets targets = layout.writes(entry.key(), replicas.from());
			long start = System.nanoTime();
			AtomicBoolean refusedAsStale = new AtomicBoolean();
			// A write a storage refused (disk full, failed storage) is reported as that
			// failure (503), not as replicas that did not answer (504).
			AtomicReference<@Nullable Throwable> storageFailure = new AtomicReference<>();
			boolean everyReplica = replicas.ack() == replicas.from();
			layout.inFlight().incrementAndGet();
			QuorumRound round = new QuorumRound(replicas.ack(), targets, (r) -> {
				layout.inFlight().decrementAndGet();
				this.fanOut.record("write", start, true);
				sink.success();
			}, (r) -> {
				layout.inFlight().decrementAndGet();
				Throwable failure = storageFailure.get();
				if (failure != null) {
					this.fanOut.record("write", start, false);
					sink.error(failure);
				}
				else {
					lost(sink, "write", replicas, r, start, (!last && refusedAsStale.get()) ? layout : null);
				}
			}, (r) -> {
			});
			for (int i = 0; i < targets.size(); i++) {
				int index = i;
				Replica replica = this.replicas.of(targets.nodes().get(i));
				replica.write(entry, replicas.ack(), everyReplica, () -> round.succeeded(index, Optional.empty()),
						(error) -> {
							if (error instanceof StorageException) {
								storageFailure.compareAndSet(null, error);
							}
							refusedAsStale.compareAndSet(false, error instanceof StaleRingException);
							round.failed(index, QuorumRound.failure(replica, error));
						});
			}
		});
	}

	/**
	 * The live entries of a key range, in key order: a paged k-way merge of every ring
	 * member's local entries ({@link RangeMerge}), one entry per key (the greatest),
	 * tombstones and expired values dropped (expiry judged once, when the range starts),
	 * at most {@code limit}. Each member is asked for pages of about the limit plus some
	 * slack ({@link ScanProperties#pageSize}), never for the whole rest of the range. A
	 * member whose scan fails (at its start or midway) is left out as long as no more
	 * than {@code from - ack} are: then every key still has {@code ack} of its replicas
	 * in the merge, so the range reads every write acknowledged by a quorum it overlaps,
	 * as a single key's read does. Past that the range fails with
	 * {@link ReplicaUnavailableException} (503).
	 * @param fromKey the first key; included when {@code inclusive}
	 * @param toExclusive the end of the range, null for none
	 */
	public Flux<Entry> range(byte[] fromKey, boolean inclusive, byte @Nullable [] toExclusive, Replicas replicas,
			long limit) {
		byte[] start = inclusive ? fromKey : RangeMerge.successor(fromKey);
		int tolerated = replicas.from() - replicas.ack();
		int pageSize = this.scan.pageSize(limit);
		return this.cluster.whenConfirmed(CONFIRMATION_WAIT).thenMany(Flux.defer(() -> {
			Ring ring = this.cluster.servingLayout().ring();
			List<RangeMerge.Member> members = new ArrayList<>();
			for (RingNode node : ring.nodes()) {
				if (node.state() != NodeState.REMOVED) {
					Replica replica = this.replicas.of(node.node());
					members.add((from, size) -> replica.scan(from, toExclusive, size));
				}
			}
			return RangeMerge.merge(members, start, pageSize, tolerated, limit, this.clock.current());
		}));
	}

	/**
	 * Fails a request whose quorum was lost: with {@link LostToNewerRing} when it may be
	 * tried again ({@code retry} is the layout it was placed under), else for good.
	 */
	private void lost(MonoSink<?> sink, String operation, Replicas replicas, QuorumRound round, long start,
			@Nullable RingLayout retry) {
		if (retry != null) {
			sink.error(new LostToNewerRing(retry.epoch()));
			return;
		}
		this.fanOut.record(operation, start, false);
		sink.error(new QuorumNotReachedException(operation, replicas, round.successes(), round.firstFailure()));
	}

	/**
	 * Runs a request, and once more when its quorum was lost because replicas refused it
	 * as placed under an older ring than theirs ({@link StaleRingException}): at an epoch
	 * change a node may coordinate a few requests under the ring its peers have just
	 * left. Their refusal made this node fetch the newer ring ({@link PeerClient}); the
	 * second try waits for it (at most {@link #NEWER_RING_WAIT}) and is placed under it.
	 * The client sees one answer, from the ring the cluster serves under.
	 */
	private <T> Mono<T> onNewerRing(Function<Boolean, Mono<T>> attempt) {
		if (!this.cluster.confirmed()) {
			return this.cluster.whenConfirmed(CONFIRMATION_WAIT).then(Mono.defer(() -> attempt.apply(false)));
		}
		return attempt.apply(false)
			.onErrorResume(LostToNewerRing.class, (lost) -> this.cluster.servingAbove(lost.epoch, NEWER_RING_WAIT)
				.then(Mono.defer(() -> attempt.apply(true))));
	}

	/** A first try lost to replicas on a newer ring than the one it was placed under. */
	private static final class LostToNewerRing extends RuntimeException {

		private final long epoch;

		LostToNewerRing(long epoch) {
			super("placed under epoch " + epoch + ", refused by replicas on a newer ring", null, false, false);
			this.epoch = epoch;
		}

	}

}
