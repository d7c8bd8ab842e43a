package io.quorumkv.service.http;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseCookie;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * Bounds the public requests a node serves at once: a filter of the public routes. Past
 * the limit a request is answered 503 with {@code Retry-After} at once instead of waiting
 * in an unbounded queue. A request holds its slot until its response is written, so a
 * range stream counts until it ends.
 */
final class InFlightLimiter implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	private static final Reply OVERLOADED = Reply
		.retryLater("node overloaded: too many requests in flight, retry later");

	private final AtomicInteger inFlight = new AtomicInteger();

	private final int limit;

	private final Counter rejected;

	InFlightLimiter(int limit, MeterRegistry registry) {
		this.limit = limit;
		Gauge.builder("quorumkv.requests.in.flight", this.inFlight, AtomicInteger::get)
			.description("Public requests being served")
			.register(registry);
		this.rejected = Counter.builder("quorumkv.requests.rejected")
			.description("Public requests refused with 503 because the in-flight limit was reached")
			.register(registry);
	}

	@Override
	public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
		if (this.inFlight.incrementAndGet() > this.limit) {
			this.inFlight.decrementAndGet();
			this.rejected.increment();
			return Mono.just(OVERLOADED);
		}
		Slot slot = new Slot();
		return Mono.defer(() -> next.handle(request))
			.<ServerResponse>map((response) -> new Held(response, slot))
			// Released here only when no response is coming; a response releases its
			// slot once written (Held.writeTo), and the release is idempotent.
			.doOnError((error) -> slot.release())
			.doOnCancel(slot::release)
			.switchIfEmpty(Mono.fromRunnable(slot::release));
	}

	int inFlight() {
		return this.inFlight.get();
	}

	/** One request's slot, given back exactly once. */
	private final class Slot extends AtomicBoolean {

		void release() {
			if (compareAndSet(false, true)) {
				InFlightLimiter.this.inFlight.decrementAndGet();
			}
		}

	}

	/** A response whose slot is given back when it has been written (or failed to). */
	private record Held(ServerResponse response, Slot slot) implements ServerResponse {

		@Override
		public HttpStatusCode statusCode() {
			return this.response.statusCode();
		}

		@Override
		public HttpHeaders headers() {
			return this.response.headers();
		}

		@Override
		public MultiValueMap<String, ResponseCookie> cookies() {
			return this.response.cookies();
		}

		@Override
		public Mono<Void> writeTo(ServerWebExchange exchange, Context context) {
			return Mono.defer(() -> this.response.writeTo(exchange, context))
				.doFinally((signal) -> this.slot.release());
		}

	}

}
