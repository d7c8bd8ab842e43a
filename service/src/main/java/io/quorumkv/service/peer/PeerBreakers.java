package io.quorumkv.service.peer;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClockSkewException;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.config.QuorumKvProperties.BreakerProperties;

/**
 * A Resilience4j circuit breaker per peer (a dead peer fails fast), exported as metrics.
 * A peer's refusal for an older ring or of a timestamp too far ahead of its clock says
 * the peer is up: it does not count against the breaker.
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
		TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(this.registry).bindTo(meters);
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
