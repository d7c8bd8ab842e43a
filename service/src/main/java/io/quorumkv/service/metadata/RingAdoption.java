package io.quorumkv.service.metadata;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

/**
 * Adopts a ring the log applied: written to the ring file and served under, when it is
 * newer than this node's and this node has a ring already or the ring lists it (a
 * newcomer replaying the log from its start adopts nothing before the ring that adds it).
 */
final class RingAdoption {

	private static final Log logger = LogFactory.getLog(RingAdoption.class);

	private final ClusterState state;

	private volatile Function<Ring, Mono<Void>> beforeFirstRing = (ring) -> Mono.empty();

	RingAdoption(ClusterState state) {
		this.state = state;
	}

	/** Whether {@code ring} is one a node whose ring is {@code mine} (or none) adopts. */
	private boolean concerns(Ring ring, Ring mine) {
		if (mine != null) {
			return ring.epoch() > mine.epoch();
		}
		return ring.node(this.state.self().id()).isPresent() || ring.nodeAt(this.state.self().url()).isPresent();
	}

	/**
	 * Adopts {@code ring} if it concerns this node (this node's ring is read once),
	 * running {@code adopting} first; completes once installed.
	 */
	CompletableFuture<?> adopt(Ring ring, Runnable adopting) {
		Ring mine = this.state.ring().orElse(null);
		if (!concerns(ring, mine)) {
			return CompletableFuture.completedFuture(null);
		}
		adopting.run();
		Mono<Void> before = (mine == null) ? this.beforeFirstRing.apply(ring).onErrorResume((error) -> {
			logger.warn("Before adopting the first ring: " + error.getMessage());
			return Mono.empty();
		}) : Mono.empty();
		return before.then(this.state.install(ring)).onErrorResume((error) -> {
			logger.warn("Could not adopt " + ring.describe() + " from the metadata log: " + error.getMessage());
			return Mono.just(false);
		}).toFuture();
	}

	/**
	 * Runs before a node without a ring adopts its first one from the log (a newcomer
	 * notes whether its storage is empty).
	 */
	void beforeFirstRing(Function<Ring, Mono<Void>> hook) {
		this.beforeFirstRing = hook;
	}

}
