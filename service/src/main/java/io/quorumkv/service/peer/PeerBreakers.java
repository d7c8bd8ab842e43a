package io.quorumkv.service.peer;

import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClockSkewException;
import io.quorumkv.service.cluster.Node;

/**
 * A Resilience4j circuit breaker per peer (a dead peer fails fast). A peer's refusal for
 * an older ring or of a timestamp too far ahead of its clock says the peer is up: it does
 * not count against the breaker.
 *
 * <p>
 * Exported as gauges read at each scrape, under Resilience4j's own names
 * ({@code resilience4j_circuitbreaker_state}, {@code _failure_rate},
 * {@code _buffered_calls}). Resilience4j's Micrometer binding would also time every call
 * through the breaker's event publisher: one event object (with its creation time) and
 * one timer per replica operation, which {@code quorumkv_replica_requests} already times.
 * With no consumer, the breaker creates no events at all.
 */
final class PeerBreakers {

	private final CircuitBreakerRegistry registry;

	PeerBreakers(BreakerProperties breaker, MeterRegistry meters) {
		this.registry = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
			.slidingWindowSize(breaker.slidingWindow())
			.minimumNumberOfCalls(breaker.minimumCalls())
			.failureRateThreshold(breaker.failureRateThreshold())
			.waitDurationInOpenState(breaker.waitInOpen())
			.ignoreExceptions(StaleRingException.class, ClockSkewException.class)
			.permittedNumberOfCallsInHalfOpenState(breaker.halfOpenCalls())
			.automaticTransitionFromOpenToHalfOpenEnabled(true)
			.build());
		this.registry.getEventPublisher().onEntryAdded((added) -> export(added.getAddedEntry(), meters));
	}

	private static void export(CircuitBreaker breaker, MeterRegistry meters) {
		for (CircuitBreaker.State state : CircuitBreaker.State.values()) {
			Gauge.builder("resilience4j.circuitbreaker.state", breaker, (b) -> (b.getState() == state) ? 1 : 0)
				.description("The states of the circuit breaker")
				.tag("name", breaker.getName())
				.tag("state", state.name().toLowerCase(Locale.ROOT))
				.register(meters);
		}
		Gauge.builder("resilience4j.circuitbreaker.failure.rate", breaker, (b) -> b.getMetrics().getFailureRate())
			.description("The failure rate of the circuit breaker")
			.tag("name", breaker.getName())
			.register(meters);
		Map<String, ToDoubleFunction<CircuitBreaker>> buffered = Map.of("successful",
				(b) -> b.getMetrics().getNumberOfSuccessfulCalls(), "failed",
				(b) -> b.getMetrics().getNumberOfFailedCalls());
		buffered.forEach((kind, calls) -> Gauge.builder("resilience4j.circuitbreaker.buffered.calls", breaker, calls)
			.description("The number of buffered calls stored in the ring buffer, by kind")
			.tag("name", breaker.getName())
			.tag("kind", kind)
			.register(meters));
	}

	/** The peer's breaker, made at first use. */
	CircuitBreaker of(Node peer) {
		return this.registry.circuitBreaker(peer.id());
	}

	/** Closes the peer's breaker if it is open or half open (the peer is up). */
	void close(String peerId) {
		this.registry.find(peerId).ifPresent((breaker) -> {
			CircuitBreaker.State state = breaker.getState();
			if (state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.HALF_OPEN) {
				try {
					breaker.transitionToClosedState();
				}
				catch (IllegalStateException ex) {
					// Another thread moved it first.
				}
			}
		});
	}

}
