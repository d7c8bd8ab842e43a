package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.replication.InternalApi;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Serves the internal routes only to callers presenting the cluster secret: none is a
 * 401, a wrong one a 403. It filters the internal routes themselves, so every form of a
 * path that WebFlux matches to them (percent-encoded letters, matrix parameters) is
 * checked; a form that matches no route is a 404 and reaches nothing. The comparison
 * takes constant time, and the secret is never logged. A single node without a secret
 * refuses every internal call.
 */
@Component
class InternalAuth implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	private static final Log logger = LogFactory.getLog(InternalAuth.class);

	private final byte[] secret;

	InternalAuth(Topology topology) {
		this.secret = (topology.secret() != null) ? topology.secret().getBytes(StandardCharsets.UTF_8) : new byte[0];
	}

	@Override
	public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
		String presented = request.headers().firstHeader(InternalApi.SECRET);
		if (presented == null) {
			return refuse(HttpStatus.UNAUTHORIZED, "internal API: missing " + InternalApi.SECRET, request);
		}
		if (this.secret.length == 0
				|| !MessageDigest.isEqual(this.secret, presented.getBytes(StandardCharsets.UTF_8))) {
			return refuse(HttpStatus.FORBIDDEN, "internal API: wrong cluster secret", request);
		}
		return next.handle(request);
	}

	private static Mono<ServerResponse> refuse(HttpStatus status, String reason, ServerRequest request) {
		logger.warn(reason + " from " + request.remoteAddress().map(Object::toString).orElse("?") + " for "
				+ request.method() + " " + request.path());
		return Mono.just(Reply.text(status, reason));
	}

}
