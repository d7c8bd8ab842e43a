package io.quorumkv.service.peer;

import java.time.Duration;

import io.quorumkv.service.config.Bounds;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The circuit breaker of each peer: after enough failed calls it opens and calls to the
 * peer fail at once instead of costing a timeout each; after {@code waitInOpen} a few
 * trial calls decide whether it closes again.
 *
 * @param failureRateThreshold percentage of failed calls that opens the breaker
 * @param slidingWindow calls the failure rate is computed over
 * @param minimumCalls calls needed before the rate is computed
 * @param waitInOpen how long an open breaker refuses calls
 * @param halfOpenCalls trial calls a breaker admits once the wait is over; it closes when
 * they succeed. Clients' requests are trial calls too: too few, and a burst of requests
 * right after a peer comes back is refused while the first trials run
 */
@ConfigurationProperties("quorumkv.cluster.breaker")
public record BreakerProperties(@DefaultValue("50") int failureRateThreshold, @DefaultValue("20") int slidingWindow,
		@DefaultValue("5") int minimumCalls, @DefaultValue("2s") Duration waitInOpen,
		@DefaultValue("10") int halfOpenCalls) {

	public BreakerProperties {
		if (failureRateThreshold < 1 || failureRateThreshold > 100) {
			throw new IllegalArgumentException("quorumkv.cluster.breaker.failure-rate-threshold must be 1..100");
		}
		Bounds.atLeastOne(slidingWindow, "quorumkv.cluster.breaker.sliding-window");
		Bounds.atLeastOne(minimumCalls, "quorumkv.cluster.breaker.minimum-calls");
		Bounds.positive(waitInOpen, "quorumkv.cluster.breaker.wait-in-open");
		Bounds.atLeastOne(halfOpenCalls, "quorumkv.cluster.breaker.half-open-calls");
	}

}
