package io.quorumkv.service.replication;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClockSkewException;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Delivers hints ({@link HintStore}) to peers that are reachable again: every
 * {@code delivery-interval}, for each peer with hints and no backoff running, one pass
 * pushes its hints (a few in parallel) and removes each one delivered. A failed pass
 * doubles the peer's backoff up to {@code max-backoff}; hints older than {@code max-age}
 * (by the wall clock) are dropped, not delivered, and so is a hint the peer refuses as
 * too far ahead of its clock: it would only land once the peer's clock caught up, over
 * everything written meanwhile.
 *
 * <p>
 * Hints follow the ring: a hint whose peer is no longer an owner of its key (the peer
 * left, was removed, or the key moved away from it) goes to the key's current owners
 * instead (this node's own storage when it is one of them).
 */
final class HintedHandoff implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(HintedHandoff.class);

	private static final int PARALLEL_DELIVERIES = 8;

	private final HintStore hints;

	private final PeerClient peers;

	private final ClusterState cluster;

	private final Storage local;

	private final HintProperties settings;

	private final HybridLogicalClock clock;

	private final Map<String, PeerState> states = new ConcurrentHashMap<>();

	private final Counter delivered;

	private final Counter redirected;

	private final Scheduler scheduler = Schedulers.newSingle("quorumkv-hints", true);

	private final Disposable ticker;

	HintedHandoff(HintStore hints, PeerClient peers, ClusterState cluster, Storage local, HintProperties settings,
			HybridLogicalClock clock, MeterRegistry meters) {
		this.hints = hints;
		this.peers = peers;
		this.cluster = cluster;
		this.local = local;
		this.settings = settings;
		this.clock = clock;
		this.delivered = Counter.builder("quorumkv.hints.delivered").description("Hints delivered").register(meters);
		this.redirected = Counter.builder("quorumkv.hints.redirected")
			.description("Hints delivered to a key's current owners because their peer no longer owns the key")
			.register(meters);
		this.ticker = Flux.interval(settings.deliveryInterval(), this.scheduler).subscribe((tick) -> tick());
	}

	private void tick() {
		long now = System.nanoTime();
		for (String peerId : this.hints.peersWithHints()) {
			PeerState state = this.states.computeIfAbsent(peerId, (id) -> new PeerState());
			Optional<Node> peer = this.cluster.ring().flatMap((ring) -> ring.node(peerId)).map(RingNode::node);
			CircuitBreaker.State breaker = peer.map(this.peers::breakerState).orElse(CircuitBreaker.State.CLOSED);
			if (!state.running && now >= state.notBefore && breaker != CircuitBreaker.State.OPEN) {
				state.running = true;
				// A half-open breaker admits a few trial calls: the clients' requests
				// need them, so a pass then sends one hint alone, a probe, and the next
				// pass delivers the rest once the breaker has closed.
				Mono<Long> pass = (breaker == CircuitBreaker.State.CLOSED) ? deliver(peerId) : deliver(peerId, 1, 1);
				pass.subscribe((count) -> {
					state.backoff = 0;
					state.running = false;
					if (count > 0) {
						logger.info("Delivered " + count + " hints for " + peerId);
					}
				}, (error) -> {
					state.backoff = (state.backoff == 0) ? this.settings.deliveryInterval().toNanos()
							: Math.min(state.backoff * 2, this.settings.maxBackoff().toNanos());
					state.notBefore = System.nanoTime() + state.backoff;
					state.running = false;
					logger.debug("Hint delivery for " + peerId + " failed, next try in "
							+ Duration.ofNanos(state.backoff) + ": " + error);
				});
			}
		}
	}

	Mono<Long> deliver(Node peer) {
		return deliver(peer.id());
	}

	/**
	 * One pass over a peer's hints; the number delivered. The first failed delivery stops
	 * the pass from taking further hints, but deliveries already under way finish: a
	 * half-open circuit breaker lets only a few trial calls through, and cancelling them
	 * would keep it from ever closing.
	 */
	Mono<Long> deliver(String peerId) {
		return deliver(peerId, Long.MAX_VALUE, PARALLEL_DELIVERIES);
	}

	/**
	 * As {@link #deliver(String)}, of at most {@code maxHints}, {@code parallel} at once.
	 */
	private Mono<Long> deliver(String peerId, long maxHints, int parallel) {
		long oldest = this.clock.wallMicros() - this.settings.maxAge().toNanos() / 1_000;
		AtomicLong count = new AtomicLong();
		AtomicLong droppedInPass = new AtomicLong();
		AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
		return this.hints.hints(peerId).take(maxHints).takeWhile((hint) -> failure.get() == null).flatMap((hint) -> {
			if (hint.timestamp() < oldest) {
				this.hints.dropped();
				droppedInPass.incrementAndGet();
				return this.hints.remove(peerId, hint);
			}
			return push(peerId, hint).then(this.hints.remove(peerId, hint)).doOnSuccess((ignored) -> {
				this.delivered.increment();
				count.incrementAndGet();
			}).onErrorResume((error) -> {
				if (error instanceof ClockSkewException) {
					logger.warn("Dropped a hint for " + peerId + ": " + error.getMessage());
					this.hints.dropped();
					droppedInPass.incrementAndGet();
					return this.hints.remove(peerId, hint);
				}
				failure.compareAndSet(null, error);
				return Mono.empty();
			});
		}, parallel)
			// Hints stored behind the pass stay pending: count what is left. Delivered
			// ones are dropped for good, so the store stays about as large as what is
			// pending.
			.then(Mono.defer(() -> (count.get() > 0 || droppedInPass.get() > 0) ? this.hints.purge().then()
					: Mono.<Void>empty()))
			.then(this.hints.hints(peerId).count())
			.flatMap((remaining) -> {
				this.hints.recount(peerId, remaining);
				Throwable error = failure.get();
				return (error != null) ? Mono.error(error) : Mono.just(count.get());
			});
	}

	/** Delivers one hint to its peer, or to the key's current owners when it moved. */
	private Mono<Void> push(String peerId, Entry hint) {
		RingLayout layout = this.cluster.layout();
		if (layout == null) {
			return Mono.error(new IllegalStateException("no ring to deliver hints under"));
		}
		List<Node> owners = layout.newOwners(hint.key());
		Optional<Node> peer = layout.ring().node(peerId).map(RingNode::node);
		boolean stillOwner = peer.isPresent() && layout.ring().isMember(peerId) && layout.owns(peerId, hint.key());
		if (stillOwner) {
			return this.peers.streams().upsert(peer.get(), hint);
		}
		this.redirected.increment();
		return Flux.fromIterable(owners)
			.flatMap((owner) -> owner.id().equals(this.cluster.self().id()) ? this.local.upsert(hint)
					: this.peers.streams().upsert(owner, hint))
			.then();
	}

	@Override
	public void close() {
		this.ticker.dispose();
		this.scheduler.dispose();
	}

	private static final class PeerState {

		volatile boolean running;

		volatile long notBefore;

		volatile long backoff;

	}

}
