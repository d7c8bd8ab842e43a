package io.quorumkv.service.security;

import java.nio.charset.StandardCharsets;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.security.web.server.ServerAuthenticationEntryPoint;
import org.springframework.security.web.server.authentication.ServerAuthenticationFailureHandler;
import org.springframework.security.web.server.authorization.ServerAccessDeniedHandler;
import org.springframework.security.web.server.firewall.ServerExchangeRejectedHandler;
import org.springframework.web.server.ServerWebExchange;

/** The 401 and 403 answers: a status and one short line of text, like every error. */
final class TextReplies {

	static final String CHALLENGE = "Bearer realm=\"quorumkv\"";

	private TextReplies() {
	}

	/** 401 for a request without a credential, where one is needed. */
	static ServerAuthenticationEntryPoint unauthenticated() {
		return (exchange, ex) -> write(exchange, HttpStatus.UNAUTHORIZED,
				"authentication required: send Authorization: Bearer <API key> or a client certificate");
	}

	/** 401 for a credential that is not known. */
	static ServerAuthenticationFailureHandler rejected() {
		return (filterExchange, ex) -> write(filterExchange.getExchange(), HttpStatus.UNAUTHORIZED,
				"authentication failed: " + ex.getMessage());
	}

	/** 403 for a known credential without the access a request needs. */
	static ServerAccessDeniedHandler forbidden() {
		return (exchange, ex) -> write(exchange, HttpStatus.FORBIDDEN,
				"forbidden: this credential may not " + exchange.getRequest().getMethod() + " "
						+ exchange.getRequest().getPath().pathWithinApplication().value());
	}

	/**
	 * 400 for a request Spring Security's firewall refuses (a path not plainly written:
	 * matrix parameters, encoded separators, {@code ..}).
	 */
	static ServerExchangeRejectedHandler rejectedRequest() {
		return (exchange, ex) -> write(exchange, HttpStatus.BAD_REQUEST, "request rejected: " + ex.getMessage());
	}

	private static Mono<Void> write(ServerWebExchange exchange, HttpStatus status, String text) {
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(status);
		if (status == HttpStatus.UNAUTHORIZED) {
			response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, CHALLENGE);
		}
		response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
		byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
		response.getHeaders().setContentLength(body.length);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

}
