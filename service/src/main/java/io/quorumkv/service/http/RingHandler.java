package io.quorumkv.service.http;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import reactor.core.publisher.Mono;

import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The ring as JSON: {@code GET /v0/ring} for clients' replica-aware routing (read only,
 * no change details) and {@code GET /internal/v0/ring} for peers catching up.
 */
@Component
class RingHandler {

	static final String PUBLIC_PATH = "/v0/ring";

	private final ClusterState state;

	RingHandler(ClusterState state) {
		this.state = state;
	}

	Mono<ServerResponse> publicRing(ServerRequest request) {
		return answer(false);
	}

	Mono<ServerResponse> internalRing(ServerRequest request) {
		return answer(true);
	}

	private Mono<ServerResponse> answer(boolean internal) {
		Ring ring = this.state.ring().orElse(null);
		if (ring == null) {
			return Mono.just(Reply.text(HttpStatus.SERVICE_UNAVAILABLE,
					"this node has no ring yet: it waits to be joined to a cluster"));
		}
		return ServerResponse.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.cacheControl(CacheControl.noCache())
			.bodyValue(internal ? RingJson.write(ring) : RingJson.writePublic(ring));
	}

}
