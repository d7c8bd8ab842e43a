package io.quorumkv.service.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.replication.InternalApi;
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
 * Serves the hot paths as Reactor Netty routes ahead of Spring WebFlux, which serves
 * everything else: {@code GET}, {@code PUT} and {@code DELETE /v0/entity} (other methods
 * on the path get WebFlux's 405), and the replicas' {@code POST /internal/v0/batch}. The
 * API is the same as through the WebFlux handlers, and so is the code behind it: the
 * in-flight limit of {@link InFlightLimiter}, the secret check of
 * {@link InternalAuthFilter}, the body budget of {@link BodyBudget}, and the parsing,
 * replication, errors and {@code quorumkv.requests} timers of {@link EntityHandler} and
 * {@link InternalHandler}. What is left out is WebFlux's per-request machinery (exchange,
 * handler mappings, filter chain, result handling, the {@code http.server.requests}
 * observation), the largest cost of a request in the node's CPU and allocation profiles
 * (docs/performance.md). {@code quorumkv.http.direct-route=false} turns the routes off.
 */
@Component
public class DirectRoutes implements NettyRouteProvider {

	static final String PATH = "/v0/entity";

	private static final String QUERY_PUNCTUATION = "-_.!~*'();/?:@&=+$,[]";

	private static final Reply MALFORMED_TARGET = Reply.text(HttpStatus.BAD_REQUEST,
			"malformed request target: the query has a character a URI does not allow");

	private final EntityHandler handler;

	private final InternalHandler internal;

	private final InFlightLimiter limiter;

	private final InternalAuthFilter auth;

	private final BodyBudget bodies;

	private final boolean enabled;

	public DirectRoutes(EntityHandler handler, InternalHandler internal, InFlightLimiter limiter,
			InternalAuthFilter auth, BodyBudget bodies, QuorumKvProperties properties) {
		this.handler = handler;
		this.internal = internal;
		this.limiter = limiter;
		this.auth = auth;
		this.bodies = bodies;
		this.enabled = properties.http().directRoute();
	}

	@Override
	public HttpServerRoutes apply(HttpServerRoutes routes) {
		if (!this.enabled) {
			return routes;
		}
		return routes.route(DirectRoutes::matches, this::serve).route(DirectRoutes::isBatch, this::serveBatch);
	}

	/** POST of exactly {@code /internal/v0/batch}. */
	static boolean isBatch(HttpServerRequest request) {
		return HttpMethod.POST.equals(request.method()) && InternalApi.BATCH_PATH.equals(request.uri());
	}

	/**
	 * GET, PUT or DELETE of exactly {@code /v0/entity}, with or without a query; a target
	 * with a fragment is left to WebFlux.
	 */
	static boolean matches(HttpServerRequest request) {
		return matches(request.method(), request.uri());
	}

	/** As above, for a request's method and target. */
	static boolean matches(HttpMethod method, String uri) {
		if (!HttpMethod.GET.equals(method) && !HttpMethod.PUT.equals(method) && !HttpMethod.DELETE.equals(method)) {
			return false;
		}
		return uri.startsWith(PATH) && (uri.length() == PATH.length() || uri.charAt(PATH.length()) == '?')
				&& uri.indexOf('#', PATH.length()) < 0;
	}

	private Publisher<Void> serve(HttpServerRequest request, HttpServerResponse response) {
		long contentLength = HttpMethod.PUT.equals(request.method()) ? contentLength(request) : -1;
		return entity(request.method(), request.uri(), contentLength, body(request, response, contentLength))
			.flatMap((answer) -> answer.writeTo(response));
	}

	/**
	 * The answer to a request {@link #matches} accepted, from whichever server layer
	 * received it ({@link EntityChannelHandler} too): a slot of the in-flight limit is
	 * held until the answer is ready (or the request cancelled); without a free slot the
	 * answer is the limiter's refusal. {@code contentLength} is a PUT's announced body
	 * length (-1 when none was announced).
	 */
	Mono<Reply> entity(HttpMethod method, String uri, long contentLength, RequestBody body) {
		if (!this.limiter.tryEnter()) {
			return Mono.just(this.limiter.refusal());
		}
		String query = rawQuery(uri);
		Mono<Reply> reply;
		if (query != null && !isUriQuery(query)) {
			reply = Mono.just(MALFORMED_TARGET);
		}
		else if (HttpMethod.GET.equals(method)) {
			reply = this.handler.get(query);
		}
		else if (HttpMethod.PUT.equals(method)) {
			reply = this.handler.put(query, contentLength, body);
		}
		else {
			reply = this.handler.delete(query);
		}
		return reply.doFinally((signal) -> this.limiter.exit());
	}

	private Publisher<Void> serveBatch(HttpServerRequest request, HttpServerResponse response) {
		Reply refusal = this.auth.refusal(request.requestHeaders().get(InternalApi.SECRET),
				() -> request.remoteAddress() + " for POST " + InternalApi.BATCH_PATH);
		if (refusal != null) {
			return refusal.writeTo(response);
		}
		return this.internal.batch(body(request, response, contentLength(request)))
			.flatMap((answer) -> answer.writeTo(response));
	}

	private RequestBody body(HttpServerRequest request, HttpServerResponse response, long contentLength) {
		return (maxSize, use) -> this.bodies.read(request.receive(), contentLength, maxSize, response::hasSentHeaders,
				use);
	}

	/**
	 * The raw query of a request target, null without one. {@link #matches} leaves
	 * targets with a fragment to WebFlux, so everything after the {@code ?} is the query.
	 */
	static @Nullable String rawQuery(String uri) {
		int question = uri.indexOf('?');
		return (question < 0) ? null : uri.substring(question + 1);
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

}
