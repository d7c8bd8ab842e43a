package io.quorumkv.service.http;

import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import reactor.core.publisher.Mono;

import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A call a node admitted from another node ({@code InternalAuth} runs before this) shows
 * that the caller is up: it closes this node's circuit breaker toward it
 * ({@link PeerClient#heardFrom}).
 */
@Component
class HeardFrom implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	private final PeerClient peers;

	HeardFrom(PeerClient peers) {
		this.peers = peers;
	}

	@Override
	public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
		String from = request.headers().firstHeader(InternalApi.FROM);
		if (from != null) {
			this.peers.heardFrom(from);
		}
		return next.handle(request);
	}

}
