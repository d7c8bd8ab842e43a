package io.quorumkv.service.http;

import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.peer.InternalApi;
import reactor.core.publisher.Mono;

import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Puts this node's wall clock (microseconds since the epoch) in every internal answer, as
 * {@code X-QuorumKV-Clock}, read when the answer's headers are written: callers measure
 * this node's clock offset from it ({@code PeerClocks}).
 */
@Component
class ClockHeader implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	private final HybridLogicalClock clock;

	ClockHeader(HybridLogicalClock clock) {
		this.clock = clock;
	}

	@Override
	public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
		ServerHttpResponse response = request.exchange().getResponse();
		response.beforeCommit(() -> Mono
			.fromRunnable(() -> response.getHeaders().set(InternalApi.CLOCK, Long.toString(this.clock.wallMicros()))));
		return next.handle(request);
	}

}
