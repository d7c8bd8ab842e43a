package io.quorumkv.brokenbuild;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * {@code wrong-304}: a GET of a key with {@code If-None-Match} is answered
 * {@code 304 Not Modified} with the tag sent, whatever the key's version (a conditional
 * read that never looks: stale 304s).
 */
final class BrokenNotModified implements WebFilter {

	private final BrokenMode mode;

	BrokenNotModified(BrokenMode mode) {
		this.mode = mode;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		String tag = exchange.getRequest().getHeaders().getFirst(HttpHeaders.IF_NONE_MATCH);
		if (tag == null || exchange.getRequest().getMethod() != HttpMethod.GET
				|| !exchange.getRequest().getPath().value().equals("/v0/entity")
				|| !this.mode.get().equals("wrong-304")) {
			return chain.filter(exchange);
		}
		exchange.getResponse().setStatusCode(HttpStatus.NOT_MODIFIED);
		exchange.getResponse().getHeaders().setETag(tag.strip());
		return exchange.getResponse().setComplete();
	}

}
