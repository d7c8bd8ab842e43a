package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.replication.InternalApi;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Serves {@code /internal/**} only to callers presenting the cluster secret: none is a
 * 401, a wrong one a 403. The comparison takes constant time, and the secret is never
 * logged. A single node without a secret refuses every internal call.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 1)
public class InternalAuthFilter implements WebFilter {

	private static final Log logger = LogFactory.getLog(InternalAuthFilter.class);

	private final byte[] secret;

	public InternalAuthFilter(Topology topology) {
		this.secret = (topology.secret() != null) ? topology.secret().getBytes(StandardCharsets.UTF_8) : new byte[0];
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (!exchange.getRequest().getPath().value().startsWith("/internal/")) {
			return chain.filter(exchange);
		}
		String presented = exchange.getRequest().getHeaders().getFirst(InternalApi.SECRET);
		if (presented == null) {
			return refuse(exchange, HttpStatus.UNAUTHORIZED, "internal API: missing " + InternalApi.SECRET);
		}
		byte[] given = presented.getBytes(StandardCharsets.UTF_8);
		if (this.secret.length == 0 || !MessageDigest.isEqual(this.secret, given)) {
			return refuse(exchange, HttpStatus.FORBIDDEN, "internal API: wrong cluster secret");
		}
		return chain.filter(exchange);
	}

	private static Mono<Void> refuse(ServerWebExchange exchange, HttpStatus status, String reason) {
		logger.warn(reason + " from " + exchange.getRequest().getRemoteAddress() + " for "
				+ exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath());
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(status);
		response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
		return response.writeWith(Mono.just(response.bufferFactory().wrap((reason + "\n").getBytes())));
	}

}
