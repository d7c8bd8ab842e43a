package io.quorumkv.service.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.util.AsciiString;
import io.quorumkv.service.config.QuorumKvProperties;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/**
 * Serves {@code GET}, {@code PUT} and {@code DELETE /v0/entity} as a Reactor Netty route
 * ahead of Spring WebFlux, which serves everything else (other methods on the path get
 * its 405). The API is the same as through {@link EntityHandler}'s WebFlux handlers, and
 * so is the code behind it: the in-flight limit of {@link InFlightLimiter}, the body
 * budget of {@link BodyBudget}, the parsing, replication, errors and
 * {@code quorumkv.requests} timers of {@link EntityHandler}. What is left out is
 * WebFlux's per-request machinery (exchange, handler mappings, filter chain, result
 * handling, the {@code http.server.requests} observation), the largest cost of a request
 * in the node's CPU and allocation profiles (docs/performance.md).
 * {@code quorumkv.http.direct-route=false} turns the route off.
 */
@Component
public class EntityRoute implements NettyRouteProvider {

	static final String PATH = "/v0/entity";

	private static final String QUERY_PUNCTUATION = "-_.!~*'();/?:@&=+$,[]";

	private static final Reply MALFORMED_TARGET = Reply.text(HttpStatus.BAD_REQUEST,
			"malformed request target: the query has a character a URI does not allow");

	private static final AsciiString RETRY_AFTER_ONE = AsciiString.cached("1");

	private final EntityHandler handler;

	private final InFlightLimiter limiter;

	private final BodyBudget bodies;

	private final boolean enabled;

	public EntityRoute(EntityHandler handler, InFlightLimiter limiter, BodyBudget bodies,
			QuorumKvProperties properties) {
		this.handler = handler;
		this.limiter = limiter;
		this.bodies = bodies;
		this.enabled = properties.http().directRoute();
	}

	@Override
	public HttpServerRoutes apply(HttpServerRoutes routes) {
		return this.enabled ? routes.route(EntityRoute::matches, this::serve) : routes;
	}

	/**
	 * GET, PUT or DELETE of exactly {@code /v0/entity}, with or without a query; a target
	 * with a fragment is left to WebFlux.
	 */
	static boolean matches(HttpServerRequest request) {
		HttpMethod method = request.method();
		if (!HttpMethod.GET.equals(method) && !HttpMethod.PUT.equals(method) && !HttpMethod.DELETE.equals(method)) {
			return false;
		}
		String uri = request.uri();
		return uri.startsWith(PATH) && (uri.length() == PATH.length() || uri.charAt(PATH.length()) == '?')
				&& uri.indexOf('#', PATH.length()) < 0;
	}

	private Publisher<Void> serve(HttpServerRequest request, HttpServerResponse response) {
		if (!this.limiter.tryEnter()) {
			return send(response, this.limiter.refusal());
		}
		String query = rawQuery(request.uri());
		HttpMethod method = request.method();
		Mono<Reply> reply;
		if (query != null && !isUriQuery(query)) {
			reply = Mono.just(MALFORMED_TARGET);
		}
		else if (HttpMethod.GET.equals(method)) {
			reply = this.handler.get(query);
		}
		else if (HttpMethod.PUT.equals(method)) {
			long contentLength = contentLength(request);
			reply = this.handler.put(query, contentLength, (maxSize, use) -> this.bodies.read(request.receive(),
					contentLength, maxSize, response::hasSentHeaders, use));
		}
		else {
			reply = this.handler.delete(query);
		}
		return reply.flatMap((answer) -> send(response, answer)).doFinally((signal) -> this.limiter.exit());
	}

	/**
	 * The raw query of a request target, null without one (as {@code URI.getRawQuery}).
	 */
	static @Nullable String rawQuery(String uri) {
		int question = uri.indexOf('?');
		if (question < 0) {
			return null;
		}
		int hash = uri.indexOf('#', question);
		return uri.substring(question + 1, (hash < 0) ? uri.length() : hash);
	}

	/**
	 * Whether {@code query} is a legal query of {@link java.net.URI}, which WebFlux
	 * parses every request target with (and answers 400 when it fails): ASCII letters,
	 * digits and {@code -_.!~*'();/?:@&=+$,[]}, {@code %} followed by two hex digits, and
	 * non-ASCII characters that are neither controls nor spaces.
	 */
	static boolean isUriQuery(String query) {
		for (int i = 0; i < query.length(); i++) {
			char c = query.charAt(i);
			if (c == '%') {
				if (i + 2 >= query.length() || Character.digit(query.charAt(i + 1), 16) < 0
						|| Character.digit(query.charAt(i + 2), 16) < 0) {
					return false;
				}
				i += 2;
			}
			else if (c < 128) {
				if (!Character.isLetterOrDigit(c) && QUERY_PUNCTUATION.indexOf(c) < 0) {
					return false;
				}
			}
			else if (Character.isISOControl(c) || Character.isSpaceChar(c)) {
				return false;
			}
		}
		return true;
	}

	/** The announced body length, -1 when there is none (chunked or no body). */
	private static long contentLength(HttpServerRequest request) {
		String header = request.requestHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
		if (header == null) {
			return -1;
		}
		try {
			return Long.parseLong(header.trim());
		}
		catch (NumberFormatException ex) {
			return -1; // Netty's decoder refuses a malformed length before a route runs
		}
	}

	private static Mono<Void> send(HttpServerResponse response, Reply reply) {
		response.status(reply.status());
		if (reply.retryAfter()) {
			response.header(HttpHeaderNames.RETRY_AFTER, RETRY_AFTER_ONE);
		}
		if (reply.contentType() != null) {
			response.header(HttpHeaderNames.CONTENT_TYPE, reply.contentType().toString());
		}
		byte[] body = reply.body();
		response.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(body.length));
		if (body.length == 0) {
			return response.send().then();
		}
		return response.sendByteArray(Mono.just(body)).then();
	}

}
