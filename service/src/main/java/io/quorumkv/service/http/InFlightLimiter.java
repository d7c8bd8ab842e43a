package io.quorumkv.service.http;

import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.config.QuorumKvProperties;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Bounds the public requests a node serves at once. Past the limit a request is answered
 * 503 with {@code Retry-After} at once instead of waiting in an unbounded queue. Range
 * streams count until they end.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public class InFlightLimiter implements WebFilter {

	private static final Reply OVERLOADED = Reply
		.retryLater("node overloaded: too many requests in flight, retry later");

	private final AtomicInteger inFlight = new AtomicInteger();

	private final int limit;

	private final Counter rejected;

	public InFlightLimiter(QuorumKvProperties properties, MeterRegistry registry) {
		this.limit = properties.http().maxInFlight();
		Gauge.builder("quorumkv.requests.in.flight", this.inFlight, AtomicInteger::get)
			.description("Public requests being served")
			.register(registry);
		this.rejected = Counter.builder("quorumkv.requests.rejected")
			.description("Public requests refused with 503 because the in-flight limit was reached")
			.register(registry);
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (!exchange.getRequest().getPath().value().startsWith("/v0/")) {
			return chain.filter(exchange);
		}
		if (!tryEnter()) {
			return OVERLOADED.writeTo(exchange.getResponse());
		}
		return chain.filter(exchange).doFinally((signal) -> exit());
	}

	/**
	 * Takes a slot for a public request; false (counted as rejected) when none is free. A
	 * taken slot is given back with {@link #exit()}.
	 */
	boolean tryEnter() {
		if (this.inFlight.incrementAndGet() > this.limit) {
			this.inFlight.decrementAndGet();
			this.rejected.increment();
			return false;
		}
		return true;
	}

	void exit() {
		this.inFlight.decrementAndGet();
	}

	/** The answer to a request refused for want of a slot. */
	Reply refusal() {
		return OVERLOADED;
	}

	int inFlight() {
		return this.inFlight.get();
	}

}
