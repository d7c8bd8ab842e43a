package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.function.Supplier;

import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.replication.InternalApi;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
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
		ServerHttpRequest request = exchange.getRequest();
		Reply refusal = refusal(request.getHeaders().getFirst(InternalApi.SECRET),
				() -> request.getRemoteAddress() + " for " + request.getMethod() + " " + request.getPath());
		if (refusal == null) {
			return chain.filter(exchange);
		}
		return refusal.writeTo(exchange.getResponse());
	}

	/**
	 * Null when {@code presented} is the cluster secret, else the refusal to send (401
	 * without a secret, 403 with a wrong one), logged with {@code caller}'s description.
	 */
	@Nullable Reply refusal(@Nullable String presented, Supplier<String> caller) {
		if (presented == null) {
			return refuse(HttpStatus.UNAUTHORIZED, "internal API: missing " + InternalApi.SECRET, caller);
		}
		byte[] given = presented.getBytes(StandardCharsets.UTF_8);
		if (this.secret.length == 0 || !MessageDigest.isEqual(this.secret, given)) {
			return refuse(HttpStatus.FORBIDDEN, "internal API: wrong cluster secret", caller);
		}
		return null;
	}

	private static Reply refuse(HttpStatus status, String reason, Supplier<String> caller) {
		logger.warn(reason + " from " + caller.get());
		return Reply.text(status, reason);
	}

}
