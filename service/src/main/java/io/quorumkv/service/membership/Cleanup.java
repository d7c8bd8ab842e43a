package io.quorumkv.service.membership;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Removes from this node's storage the keys it no longer owns ({@link Storage#retain}):
 * after a change has finished (automatically with
 * {@code quorumkv.cluster.membership.auto-cleanup}) or when the operator asks
 * ({@code scripts/qkv cleanup}), at {@code quorumkv.cluster.membership.cleanup-rate}
 * entries a second. It starts only between changes. A change may begin while it runs (the
 * metadata group asks no member whether it is cleaning up, so that no change waits on one
 * node) and make this node an owner again of keys it was to remove: from then on it keeps
 * every key ({@link #movedOn}).
 * <p>
 * The automatic clean-ups of a change's members run one at a time, in the order of their
 * ids ({@link #runInTurn}, {@link CleanupTurn}): each member waits until the one before
 * it has neither one waiting nor one running ({@code GET /internal/v0/cleanup}), as an
 * operator runs Cassandra's {@code nodetool cleanup} node by node. A clean-up rewrites a
 * node's whole store; one at a time, a quorum of every key's replicas is free of it, and
 * the cluster gives it one node's share of its machines instead of every node's at once.
 * <p>
 * A newcomer skips the automatic clean-up after its own join (or replacement) when its
 * storage was empty as it agreed to the change ({@link NewcomerMark}, recorded in the
 * data folder before it adopted the ring): it then holds only what the change sent it as
 * an owner (streams, and writes, repairs and hints for keys whose new owners include it),
 * all of it its own once the change ends. Rewriting its whole store to remove nothing
 * cost as long as a member's clean-up (docs/performance.md).
 */
final class Cleanup {

	private static final Log logger = LogFactory.getLog(Cleanup.class);

	private final ClusterState state;

	private final Storage storage;

	private final NewcomerMark newcomer;

	private final CleanupTurn turn;

	private final long entriesPerSecond;

	private final AtomicBoolean running = new AtomicBoolean();

	/** Automatic clean-ups waiting for their turn (at most one, but for a moment). */
	private final AtomicInteger waiting = new AtomicInteger();

	private final Counter removed;

	private volatile @Nullable Map<String, @Nullable Object> last;

	/**
	 * @param folder the data folder, where a newcomer records that it started empty
	 * @param entriesPerSecond how many entries of its storage a clean-up looks at per
	 * second ({@link Storage#retain(java.util.function.Predicate, long)})
	 * @param pollInterval how often an automatic clean-up waiting for its turn asks the
	 * member before it
	 */
	Cleanup(ClusterState state, Storage storage, Path folder, long entriesPerSecond, PeerClient peers,
			Duration pollInterval, Duration callTimeout, MeterRegistry meters) {
		this.state = state;
		this.storage = storage;
		this.newcomer = new NewcomerMark(state, storage, folder);
		this.turn = new CleanupTurn(state, peers, pollInterval, callTimeout);
		this.entriesPerSecond = entriesPerSecond;
		this.removed = Counter.builder("quorumkv.membership.cleanup.removed")
			.description("Entries removed because this node no longer owns their keys")
			.register(meters);
		Gauge.builder("quorumkv.membership.cleanup.running", this.running, (flag) -> flag.get() ? 1 : 0)
			.description("1 while this node cleans up after a change")
			.register(meters);
		Gauge.builder("quorumkv.membership.cleanup.waiting", this.waiting, (count) -> (count.get() > 0) ? 1 : 0)
			.description("1 while this node's automatic clean-up waits for the member before it")
			.register(meters);
	}

	boolean running() {
		return this.running.get();
	}

	/** Removes the keys this node does not own under its ring; the number removed. */
	Mono<Long> run() {
		return started().flatMap(this::clean);
	}

	/** Marks a clean-up as running, on the ring thread ({@link #begin}). */
	private Mono<RingLayout> started() {
		return Mono.fromCallable(this::begin).subscribeOn(this.state.ringThread());
	}

	private Mono<Long> clean(RingLayout layout) {
		long start = System.nanoTime();
		String self = this.state.self().id();
		logger.info("Cleanup: removing the keys this node does not own under epoch " + layout.epoch() + ", looking at "
				+ this.entriesPerSecond + " entries a second");
		return this.storage.retain((key) -> layout.owns(self, key) || movedOn(layout), this.entriesPerSecond)
			.doOnNext((count) -> {
				this.removed.increment(count);
				long durationMs = (System.nanoTime() - start) / 1_000_000;
				Long keptFrom = movedOn(layout) ? this.state.epoch() : null;
				// Logged before finished() passes the turn on, so that the next
				// member's start is never logged before this one's end.
				logger.info("Cleanup under epoch " + layout.epoch() + " removed " + count + " entries in " + durationMs
						+ " ms"
						+ ((keptFrom != null) ? "; the ring moved on to epoch " + keptFrom
								+ " while it ran, so it kept every key it looked at since (the clean-up after that"
								+ " change removes them)" : ""));
				finished(layout, count, durationMs, null, keptFrom);
			})
			.doFinally((signal) -> this.running.set(false));
	}

	/**
	 * Whether this node's ring is no longer the one a clean-up started under: a change
	 * began since, and may have made this node an owner of keys the clean-up was to
	 * remove (the writes and streams of the change bring them). The rest of the clean-up
	 * then keeps every key; the change ends with a clean-up of its own. Read per key: a
	 * node adopts a ring before it serves any call placed under it ({@code RingGate}), so
	 * a key looked at before the change began held nothing of it.
	 */
	private boolean movedOn(RingLayout layout) {
		return this.state.epoch() != layout.epoch();
	}

	/**
	 * The automatic clean-up after the change that ended with {@code ring}: after
	 * {@code delay}, once the member before this one (by id, {@link #predecessor}) has
	 * none waiting and none running, or does not answer ({@link CleanupTurn}). Given up,
	 * with an error, when a newer ring replaced {@code ring} in the meantime (the change
	 * that made it cleans up after itself). A newcomer that started
	 * {@code finishedChange} with an empty storage takes its turn all the same and passes
	 * it on at once, removing nothing: the member after it waits for it, so for the one
	 * before it too.
	 */
	Mono<Long> runInTurn(Ring ring, String finishedChange, Duration delay) {
		boolean skip = startedEmptyIn(finishedChange);
		Optional<RingNode> before = CleanupTurn.predecessor(ring, this.state.self().id());
		// Counted as waiting until it has started (running) or failed: the member after
		// this one never sees neither while this one's turn passes to its clean-up.
		return Mono.fromRunnable(this.waiting::incrementAndGet)
			.then(Mono.delay(delay))
			.then(before.map((node) -> this.turn.await(ring, node)).orElse(Mono.empty()))
			.then(Mono.fromRunnable(() -> this.turn.current(ring)))
			.then(started())
			.doFinally((signal) -> this.waiting.decrementAndGet())
			.flatMap((layout) -> skip ? skip(layout, finishedChange) : clean(layout));
	}

	/**
	 * Records the clean-up just finished under {@code layout} for {@link #status}, no
	 * longer running before its caller hears of it (the {@code doFinally} that clears the
	 * flag as well, for a failed or cancelled one, runs after the caller has).
	 */
	private void finished(RingLayout layout, long removed, long durationMs, @Nullable String skipped,
			@Nullable Long keptFromEpoch) {
		Map<String, @Nullable Object> done = new LinkedHashMap<>();
		done.put("epoch", layout.epoch());
		done.put("removed", removed);
		done.put("durationMs", durationMs);
		if (skipped != null) {
			done.put("skipped", skipped);
		}
		if (keptFromEpoch != null) {
			done.put("keptFromEpoch", keptFromEpoch);
		}
		this.last = done;
		this.running.set(false);
	}

	private Mono<Long> skip(RingLayout layout, String change) {
		return Mono.fromCallable(() -> skipNow(layout, change))
			.subscribeOn(Schedulers.boundedElastic())
			.doFinally((signal) -> this.running.set(false));
	}

	private long skipNow(RingLayout layout, String change) {
		this.newcomer.forget();
		logger.info("Cleanup under epoch " + layout.epoch() + " skipped: this node joined in change " + change
				+ " with an empty storage, so it holds only keys it owns");
		finished(layout, 0L, 0L, "newcomer of change " + change + ", which started with an empty storage", null);
		return 0L;
	}

	/**
	 * Before this node, which has no ring, adopts its first one: notes whether it is a
	 * newcomer with an empty storage ({@link NewcomerMark}).
	 */
	Mono<Void> noteIfNewcomer(Ring next) {
		return this.newcomer.noteIfNewcomer(next);
	}

	/**
	 * Whether this node recorded that it started {@code change} with an empty storage.
	 */
	boolean startedEmptyIn(String change) {
		return this.newcomer.startedEmptyIn(change);
	}

	/** On the ring thread: checks that no change is under way or prepared, and starts. */
	private RingLayout begin() {
		RingLayout layout = this.state.layout();
		if (layout == null) {
			throw new IllegalStateException("this node has no ring");
		}
		Ring ring = layout.ring();
		if (ring.change() != null) {
			throw new IllegalStateException("a change is under way: clean up once it has finished");
		}
		if (!this.running.compareAndSet(false, true)) {
			throw new IllegalStateException("a cleanup is running already");
		}
		return layout;
	}

	/** Whether one waits for its turn, whether one runs, and what the last one did. */
	Map<String, @Nullable Object> status() {
		Map<String, @Nullable Object> status = new LinkedHashMap<>();
		status.put("waiting", this.waiting.get() > 0);
		status.put("running", this.running.get());
		status.put("last", this.last);
		return status;
	}

}
