package io.quorumkv.service.repair;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Repairs this node's primary keys every {@code quorumkv.repair.interval}, each wait
 * drawn within {@code ±jitter} of it (the first one between a quarter of it and all of
 * it), so that the nodes of a cluster started together do not repair together, and a node
 * that restarts does not repair at once. A repair still running when the next one is due
 * (an operator's, say) is left alone; that turn is skipped.
 */
final class RepairScheduler implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RepairScheduler.class);

	private final RepairService service;

	private final Duration interval;

	private final double jitter;

	private final Scheduler timer;

	private volatile Disposable next = () -> {
	};

	private volatile boolean closed;

	RepairScheduler(RepairService service, Duration interval, double jitter, Scheduler timer) {
		this.service = service;
		this.interval = interval;
		this.jitter = jitter;
		this.timer = timer;
	}

	void start() {
		schedule(
				Duration.ofNanos((long) (this.interval.toNanos() * ThreadLocalRandom.current().nextDouble(0.25, 1.0))));
	}

	private void schedule(Duration delay) {
		if (this.closed) {
			return;
		}
		this.next = Mono.delay(delay, this.timer)
			.then(this.service.repair(RepairService.Scope.PRIMARY))
			.onErrorResume((error) -> {
				if (error instanceof RepairService.RepairRefusedException) {
					logger.info("Scheduled repair skipped: " + error.getMessage());
				}
				return Mono.empty();
			})
			.doFinally((signal) -> schedule(nextDelay()))
			.subscribe();
	}

	private Duration nextDelay() {
		double factor = 1 + this.jitter * (2 * ThreadLocalRandom.current().nextDouble() - 1);
		return Duration.ofNanos((long) (this.interval.toNanos() * factor));
	}

	@Override
	public void close() {
		this.closed = true;
		this.next.dispose();
	}

}
