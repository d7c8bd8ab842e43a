package io.quorumkv.service.membership;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Removes from this node's storage the keys it no longer owns ({@link Storage#retain}):
 * after a change has finished (automatically with
 * {@code quorumkv.cluster.membership.auto-cleanup}) or when the operator asks
 * ({@code scripts/qkv cleanup}), at {@code quorumkv.cluster.membership.cleanup-rate}
 * entries a second. It runs only between changes, and while it runs this node refuses to
 * prepare a change (a change could make it an owner of keys being removed).
 */
final class Cleanup {

	private static final Log logger = LogFactory.getLog(Cleanup.class);

	private final ClusterState state;

	private final Storage storage;

	private final long entriesPerSecond;

	private final AtomicBoolean running = new AtomicBoolean();

	private final Counter removed;

	private volatile @Nullable Participant participant;

	private volatile @Nullable Map<String, @Nullable Object> last;

	/**
	 * @param entriesPerSecond how many entries of its storage a clean-up looks at per
	 * second ({@link Storage#retain(java.util.function.Predicate, long)})
	 */
	Cleanup(ClusterState state, Storage storage, long entriesPerSecond, MeterRegistry meters) {
		this.state = state;
		this.storage = storage;
		this.entriesPerSecond = entriesPerSecond;
		this.removed = Counter.builder("quorumkv.membership.cleanup.removed")
			.description("Entries removed because this node no longer owns their keys")
			.register(meters);
	}

	void participant(Participant participant) {
		this.participant = participant;
	}

	boolean running() {
		return this.running.get();
	}

	/** Removes the keys this node does not own under its ring; the number removed. */
	Mono<Long> run() {
		return Mono.fromCallable(this::begin).subscribeOn(this.state.ringThread()).flatMap((layout) -> {
			long start = System.nanoTime();
			String self = this.state.self().id();
			logger.info("Cleanup: removing the keys this node does not own under epoch " + layout.epoch()
					+ ", looking at " + this.entriesPerSecond + " entries a second");
			return this.storage.retain((key) -> layout.owns(self, key), this.entriesPerSecond).doOnNext((count) -> {
				this.removed.increment(count);
				Map<String, @Nullable Object> done = new LinkedHashMap<>();
				done.put("epoch", layout.epoch());
				done.put("removed", count);
				done.put("durationMs", (System.nanoTime() - start) / 1_000_000);
				this.last = done;
				logger.info("Cleanup under epoch " + layout.epoch() + " removed " + count + " entries in "
						+ done.get("durationMs") + " ms");
			}).doFinally((signal) -> this.running.set(false));
		});
	}

	/**
	 * How long after a change has finished this node starts its automatic clean-up:
	 * {@code delay}, plus a share of it by the node's place among the ring's members
	 * (ordered by id), so that the members start theirs at different moments (a
	 * clean-up's first moments, its flush and the start of its compaction, cost the most,
	 * and a quorum can go around one node at a time, not around all of them).
	 */
	static Duration autoStart(Ring ring, String self, Duration delay) {
		List<String> members = ring.nodes().stream().map(RingNode::id).filter(ring::isMember).sorted().toList();
		int place = Math.max(0, members.indexOf(self));
		return delay.plus(delay.multipliedBy(place).dividedBy(Math.max(1, members.size())));
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
		Participant agreement = this.participant;
		// A proposal this node has moved past (the one that just finished) does not
		// count.
		if (agreement != null && agreement.pending().filter((p) -> p.baseEpoch() >= ring.epoch()).isPresent()) {
			throw new IllegalStateException("a change is being agreed: clean up once it has finished");
		}
		if (!this.running.compareAndSet(false, true)) {
			throw new IllegalStateException("a cleanup is running already");
		}
		return layout;
	}

	/** Whether one runs, and what the last one did. */
	Map<String, @Nullable Object> status() {
		Map<String, @Nullable Object> status = new LinkedHashMap<>();
		status.put("running", this.running.get());
		status.put("last", this.last);
		return status;
	}

}
