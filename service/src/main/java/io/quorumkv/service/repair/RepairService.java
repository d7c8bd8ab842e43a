package io.quorumkv.service.repair;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.repair.RepairReport.RangeOutcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Runs this node's repairs, at most one at a time ({@link RepairRun} does the work): on
 * demand ({@code POST /actuator/quorumkv/repair}, {@code scripts/qkv repair}) and on
 * schedule ({@link RepairScheduler}). A repair starts by taking a stamp of the node's
 * clock; every range it reaches with all its replicas is recorded as repaired by this
 * node at that stamp, here and on those replicas ({@link RepairHistory}), which is what
 * lets tombstones of the keys this node is the primary of, written before it, be purged
 * once past the grace period. A repair is refused while a membership change is under way
 * (and records nothing when the ring changed while it ran).
 */
public final class RepairService {

	private static final Log logger = LogFactory.getLog(RepairService.class);

	/** Which ranges a repair covers. */
	public enum Scope {

		/** Every key this node owns, compared with each of its other owners. */
		ALL,
		/**
		 * The keys this node is the primary of (the first of their owners): every key has
		 * one primary, so every node running its primary keys covers each key once.
		 */
		PRIMARY

	}

	private final RepairContext context;

	private final RangeReplicas ranges;

	private final HybridLogicalClock clock;

	private final RepairHistory history;

	private final RepairMetrics metrics;

	private final AtomicBoolean running = new AtomicBoolean();

	private volatile @Nullable RepairReport last;

	RepairService(RepairContext context, RangeReplicas ranges, HybridLogicalClock clock, RepairHistory history,
			RepairMetrics metrics) {
		this.context = context;
		this.ranges = ranges;
		this.clock = clock;
		this.history = history;
		this.metrics = metrics;
	}

	/**
	 * Repairs the ranges of {@code scope} with all their replicas.
	 * @return the report; fails at once with {@link RepairRefusedException} while another
	 * repair of this node runs, while a membership change is under way, or before this
	 * node has a ring
	 */
	public Mono<RepairReport> repair(Scope scope) {
		return Mono.defer(() -> {
			String refusal = this.ranges.ring().refusal();
			if (refusal != null) {
				return Mono.error(new RepairRefusedException("no repair of " + this.context.self() + ": " + refusal));
			}
			if (!this.running.compareAndSet(false, true)) {
				return Mono.error(new RepairRefusedException("a repair of " + this.context.self() + " is running"));
			}
			long startedAt = this.clock.now();
			Node self = this.context.self();
			List<RepairRange> covered = this.ranges.rangesOf(self);
			logger.info("Repair of " + covered.size() + " ranges (" + scope.name().toLowerCase() + ") started");
			return new RepairRun(this.context, covered, this.ranges, scope).run()
				.flatMap((report) -> recordSuccesses(report, covered, startedAt).thenReturn(report))
				.doOnSuccess((report) -> {
					this.last = report;
					this.metrics.record(report);
					logger.info("Repair done in " + report.duration().toMillis() + " ms: ranges compared "
							+ report.rangesCompared() + ", differed " + report.rangesDiffered() + ", failed "
							+ report.rangesFailed() + "; entries streamed in " + report.entriesIn() + ", out "
							+ report.entriesOut());
					report.ranges()
						.stream()
						.filter((range) -> !range.succeeded())
						.forEach((range) -> logger.warn("Repair of range " + range.index() + " " + range.tokens()
								+ " failed: " + range.failure()));
				})
				.doOnError((error) -> {
					this.metrics.failed();
					logger.warn("Repair failed: " + error);
				})
				.doFinally((signal) -> this.running.set(false));
		});
	}

	/**
	 * Records the ranges every replica of which took part as repaired at
	 * {@code startedAt}, here and on those replicas.
	 */
	private Mono<Void> recordSuccesses(RepairReport report, List<RepairRange> covered, long startedAt) {
		List<RepairRange> repaired = new ArrayList<>();
		for (int i = 0; i < covered.size(); i++) {
			RangeOutcome outcome = report.ranges().get(i);
			if (outcome.succeeded()) {
				repaired.add(covered.get(i));
			}
		}
		if (repaired.isEmpty()) {
			return Mono.empty();
		}
		Mono<Void> here = Mono
			.fromRunnable(() -> this.history.record(repaired.stream().map(RepairRange::tokens).toList(),
					this.context.self().id(), report.scope(), startedAt))
			.subscribeOn(this.context.scheduler())
			.then();
		List<Node> replicas = repaired.stream()
			.flatMap((range) -> range.replicas().stream())
			.distinct()
			.filter((node) -> !node.equals(this.context.self()))
			.toList();
		return here.then(Flux.fromIterable(replicas).flatMap((peer) -> {
			List<TokenRange> held = repaired.stream()
				.filter((range) -> range.replicas().contains(peer))
				.map(RepairRange::tokens)
				.toList();
			return this.context.peers()
				.done(peer, new RepairCodec.Done(startedAt, held), report.scope())
				.onErrorResume((error) -> {
					logger.warn("Could not tell " + peer + " that its ranges were repaired: " + error);
					return Mono.empty();
				});
		}).then());
	}

	public boolean running() {
		return this.running.get();
	}

	/** The last repair this node finished, if any since it started. */
	public Optional<RepairReport> last() {
		return Optional.ofNullable(this.last);
	}

	/** Every range with its replicas. */
	public List<RepairRange> ranges() {
		return this.ranges.ranges();
	}

	/**
	 * When every key of a range was last covered by a successful repair: the oldest, over
	 * the range's replicas, of the last successful repair each ran (each covers the keys
	 * it is the primary of); a stamp of the clock of the node that ran it, or empty when
	 * one of them never did.
	 */
	public Optional<Long> lastSuccess(RepairRange range) {
		return lastSuccess(this.history, range);
	}

	static Optional<Long> lastSuccess(RepairHistory history, RepairRange range) {
		long oldest = Long.MAX_VALUE;
		for (Node replica : range.replicas()) {
			oldest = Math.min(oldest, history.repairedAt(range.tokens(), replica.id(), Scope.PRIMARY));
		}
		return (oldest == Long.MIN_VALUE || range.replicas().isEmpty()) ? Optional.empty() : Optional.of(oldest);
	}

	/**
	 * Another repair of this node is running, a membership change is under way, or the
	 * node has no ring yet; answered 409.
	 */
	public static final class RepairRefusedException extends RuntimeException {

		RepairRefusedException(String message) {
			super(message, null, false, false);
		}

	}

}
