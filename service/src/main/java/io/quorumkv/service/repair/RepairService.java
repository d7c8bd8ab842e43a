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
 * clock; every range it reaches with all its replicas is recorded as repaired at that
 * stamp, here and on those replicas ({@link RepairHistory}), which is what lets
 * tombstones of the range written before it be purged once past the grace period.
 */
public final class RepairService {

	private static final Log logger = LogFactory.getLog(RepairService.class);

	/** Which ranges a repair covers. */
	public enum Scope {

		/** Every range this node holds a replica of. */
		ALL,
		/**
		 * The ranges this node is the primary of: one node per range, so that every node
		 * running its primary ranges covers each range once.
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
	 * @return the report; fails at once with {@link RepairRunningException} while another
	 * repair of this node runs
	 */
	public Mono<RepairReport> repair(Scope scope) {
		return Mono.defer(() -> {
			if (!this.running.compareAndSet(false, true)) {
				return Mono.error(new RepairRunningException("a repair of " + this.context.self() + " is running"));
			}
			long startedAt = this.clock.now();
			Node self = this.context.self();
			List<RepairRange> covered = this.ranges.rangesOf(self)
				.stream()
				.filter((range) -> scope == Scope.ALL || range.primary().equals(self))
				.toList();
			logger.info("Repair of " + covered.size() + " ranges (" + scope.name().toLowerCase() + ") started");
			return new RepairRun(this.context, covered).run(scope)
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
			.fromRunnable(() -> this.history.record(repaired.stream().map(RepairRange::tokens).toList(), startedAt))
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
			return this.context.peers().done(peer, new RepairCodec.Done(startedAt, held)).onErrorResume((error) -> {
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
	 * When a range was last repaired successfully (a stamp of the clock of the node that
	 * ran it), or empty.
	 */
	public Optional<Long> lastSuccess(RepairRange range) {
		long at = this.history.repairedAt(range.tokens());
		return (at == Long.MIN_VALUE) ? Optional.empty() : Optional.of(at);
	}

	/** Another repair of this node is running; answered 409. */
	public static final class RepairRunningException extends RuntimeException {

		RepairRunningException(String message) {
			super(message, null, false, false);
		}

	}

}
