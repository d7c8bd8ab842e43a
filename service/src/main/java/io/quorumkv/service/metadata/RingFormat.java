package io.quorumkv.service.metadata;

import java.time.Duration;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A node that starts with a ring brings the metadata log up to it: until the log holds a
 * ring at least as new as this node's, it proposes its ring as a format entry (every 200
 * ms, while no leader answers); the first such entry becomes the log's first ring and the
 * others are refused ({@link RingCommand}). Once the log's ring, read through the leader,
 * is this node's or older (or has been installed here when newer), the node's ring is
 * confirmed current ({@link ClusterState#confirm()}) and the node coordinates requests.
 */
final class RingFormat {

	private static final Log logger = LogFactory.getLog(RingFormat.class);

	private final ClusterState state;

	private final MetadataClient client;

	private final long started = System.nanoTime();

	private RingFormat(ClusterState state, MetadataClient client) {
		this.state = state;
		this.client = client;
	}

	/** Starts formatting on {@code scheduler}; disposing it stops. */
	static Disposable start(ClusterState state, MetadataClient client, Scheduler scheduler) {
		RingFormat format = new RingFormat(state, client);
		return Flux.interval(Duration.ZERO, Duration.ofMillis(200), scheduler)
			.onBackpressureDrop()
			.concatMap((tick) -> format.formatIfBehind().onErrorResume((error) -> {
				logger.debug("Metadata log not formatted yet: " + error.getMessage());
				return Mono.just(false);
			}), 1)
			.takeUntil((done) -> done)
			.subscribe();
	}

	private Mono<Boolean> formatIfBehind() {
		Ring mine = this.state.ring().orElse(null);
		if (mine == null) {
			return Mono.just(true);
		}
		return this.client.read().flatMap((logged) -> {
			if (logged.isPresent() && logged.get().epoch() >= mine.epoch()) {
				return confirm(logged.get()).thenReturn(true);
			}
			logger.info("The metadata log " + logged.map((r) -> "is at epoch " + r.epoch()).orElse("holds no ring")
					+ ": proposing this node's " + mine.describe() + " as its start");
			// Asked again: the next read confirms the ring the log holds then.
			return this.client.submit(RingCommand.format(mine)).map((outcome) -> false);
		});
	}

	/** Installs the log's ring when newer than this node's, then confirms it. */
	private Mono<Void> confirm(Ring logged) {
		if (this.state.confirmed()) {
			return Mono.empty();
		}
		long before = this.state.epoch();
		return this.state.install(logged).then(Mono.fromRunnable(() -> {
			this.state.confirm();
			logger.info("Ring confirmed current by the metadata group at epoch " + Math.max(before, logged.epoch())
					+ ((logged.epoch() > before) ? " (this node restarted at epoch " + before + ")" : "") + ", "
					+ Duration.ofNanos(System.nanoTime() - this.started).toMillis()
					+ " ms after the group started here: the node coordinates requests");
		}));
	}

}
