package io.quorumkv.service.http;

import java.util.function.Function;

import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.replication.ReplicationService;
import io.quorumkv.service.replication.Replicas;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The public API of the node: {@code /v0/status}, {@code /v0/entity},
 * {@code /v0/entities} and the API's own description at {@code /v0/openapi.yaml}. Parses
 * and checks the request, hands it to the {@link ReplicationService}, and answers with a
 * status and a short body for every failure (see {@link ErrorResponses}).
 */
@Component
class EntityHandler {

	static final String STATUS_PATH = "/v0/status";

	static final String ENTITY_PATH = "/v0/entity";

	static final String ENTITIES_PATH = "/v0/entities";

	static final String OPENAPI_PATH = "/v0/openapi.yaml";

	/** Where the build puts {@code docs/openapi.yaml} on the class path. */
	static final String OPENAPI_LOCATION = "openapi/openapi.yaml";

	/** The largest {@code limit} of a range (a billion records). */
	static final long MAX_LIMIT = 1_000_000_000L;

	/** The longest {@code ttl} of a write, in seconds: ten years of 365 days. */
	static final long MAX_TTL_SECONDS = 10L * 365 * 24 * 3600;

	/** The lower bound of an open range: every key sorts after it. */
	private static final byte[] NO_KEY = new byte[0];

	private static final Reply NOT_FOUND = Reply.text(HttpStatus.NOT_FOUND, "not found");

	private static final MediaType YAML = MediaType.parseMediaType("application/yaml");

	private final ReplicationService replication;

	private final Storage storage;

	private final RequestMetrics metrics;

	private final BodyBudget bodies;

	private final int maxKeySize;

	private final int maxBodySize;

	private final Resource openApi = new ClassPathResource(OPENAPI_LOCATION);

	private final ConditionalRequests conditional;

	private final EpochHeader epoch;

	EntityHandler(ReplicationService replication, Storage storage, RequestMetrics metrics, BodyBudget bodies,
			HttpProperties limits, ConditionalRequests conditional, EpochHeader epoch) {
		this.replication = replication;
		this.epoch = epoch;
		this.conditional = conditional;
		this.storage = storage;
		this.metrics = metrics;
		this.bodies = bodies;
		this.maxKeySize = (int) limits.maxKeySize().toBytes();
		this.maxBodySize = (int) limits.maxBodySize().toBytes();
	}

	Mono<ServerResponse> status(ServerRequest request) {
		return handle("status", request, QueryParameters.NONE, "GET /v0/status", (query) -> {
			String failure = this.storage.stats().failure();
			return Mono.just((failure == null) ? Reply.text(HttpStatus.OK, "OK")
					: Reply.text(HttpStatus.SERVICE_UNAVAILABLE, "storage failed: " + failure));
		});
	}

	/**
	 * GET /v0/entity: the value with its version as {@code ETag}, 304 when
	 * {@code If-None-Match} names that version, or 404 when absent or deleted. With
	 * {@code consistency=serial}, read after completing any conditional write in progress
	 * ({@link ConditionalRequests}).
	 */
	Mono<ServerResponse> get(ServerRequest request) {
		return read("get", "GET /v0/entity", request);
	}

	/**
	 * HEAD /v0/entity: what a GET answers, status and headers ({@code ETag},
	 * {@code Content-Length}), without the body (the server drops it).
	 */
	Mono<ServerResponse> head(ServerRequest request) {
		return read("head", "HEAD /v0/entity", request);
	}

	private Mono<ServerResponse> read(String operation, String route, ServerRequest request) {
		return handle(operation, request, QueryParameters.KEY_READ, route, (query) -> {
			byte[] key = query.key("id", this.maxKeySize);
			String ifNoneMatch = request.headers().firstHeader(HttpHeaders.IF_NONE_MATCH);
			if (ConditionalRequests.serial(query)) {
				return this.conditional.read(key, ifNoneMatch);
			}
			Replicas replicas = replicas(query);
			return this.replication.get(key, replicas)
				.filter((entry) -> !entry.isTombstone())
				.<ServerResponse>map((entry) -> {
					String etag = Versions.etag(entry);
					return Versions.matches(ifNoneMatch, etag) ? Reply.notModified(etag)
							: Reply.value(entry.value(), etag);
				})
				.defaultIfEmpty(NOT_FOUND);
		});
	}

	/**
	 * PUT /v0/entity: the body, read whole within {@link BodyBudget}, is the value; with
	 * {@code ttl} it expires that many seconds after the write's timestamp. An announced
	 * length over the limit is refused before a byte of the body is read. With
	 * {@code If-Match} or {@code If-None-Match}, written only if they hold
	 * ({@link ConditionalRequests}).
	 */
	Mono<ServerResponse> put(ServerRequest request) {
		return handle("put", request, QueryParameters.KEY_WRITE, "PUT /v0/entity", (query) -> {
			byte[] key = query.key("id", this.maxKeySize);
			long ttl = ttl(query.text("ttl"));
			WriteConditions conditions = WriteConditions.of(request);
			if (conditions != null) {
				ConditionalRequests.noReplicas(query, "a conditional write");
			}
			Replicas replicas = (conditions != null) ? null : replicas(query);
			if (request.headers().contentLength().orElse(-1) > this.maxBodySize) {
				throw new ApiException(HttpStatus.CONTENT_TOO_LARGE,
						"request body too large: the limit is " + this.maxBodySize + " bytes");
			}
			return this.bodies.read(request, this.maxBodySize, (value) -> (replicas == null)
					? this.conditional.write(key, value, ttl, conditions)
					: this.replication.write(key, value, ttl, replicas).<ServerResponse>thenReturn(Reply.CREATED));
		});
	}

	/**
	 * DELETE /v0/entity: writes a tombstone. A {@code ttl} is refused (400), whatever its
	 * value: a tombstone does not expire, and a client sending one expects something this
	 * call would not do.
	 */
	Mono<ServerResponse> delete(ServerRequest request) {
		return handle("delete", request, QueryParameters.KEY, "DELETE /v0/entity", (query) -> {
			byte[] key = query.key("id", this.maxKeySize);
			WriteConditions conditions = WriteConditions.of(request);
			if (conditions != null) {
				ConditionalRequests.noReplicas(query, "a conditional write");
				return this.conditional.write(key, null, 0, conditions);
			}
			Replicas replicas = replicas(query);
			return this.replication.write(key, null, replicas).<ServerResponse>thenReturn(Reply.ACCEPTED);
		});
	}

	/**
	 * GET /v0/entities: the live records of a key range in key order, from {@code start}
	 * (inclusive) or {@code after} (exclusive: the last key of a previous page) to
	 * {@code end} (exclusive), at most {@code limit}, read at {@code replicas} (see
	 * {@link ReplicationService#range}). The default format is one JSON object per line;
	 * {@code Accept: application/octet-stream} gives one chunk per record,
	 * {@code key \n value} ({@link ScanFormat}). The status is decided by the first
	 * record (or the end, or an error); then the records are written as the socket
	 * drains.
	 */
	Mono<ServerResponse> range(ServerRequest request) {
		return handle("range", request, QueryParameters.RANGE, "GET /v0/entities", (query) -> {
			boolean inclusive = query.has("start");
			if (inclusive == query.has("after")) {
				throw ApiException.badRequest("give exactly one of 'start' (inclusive) and 'after' (exclusive)");
			}
			// An empty bound is an open end: start= and after= from the first key, end=
			// past the last.
			byte[] from = query.optionalKey(inclusive ? "start" : "after", this.maxKeySize);
			byte[] end = query.optionalKey("end", this.maxKeySize);
			long limit = limit(query.text("limit"));
			Replicas replicas = replicas(query);
			ScanFormat format = ScanFormat.accepted(request.headers().accept());
			Flux<DataBuffer> records = this.replication
				.range((from != null) ? from : NO_KEY, inclusive, end, replicas, limit)
				.map(format::encode);
			return records
				.switchOnFirst((first, all) -> first.isOnError() ? Mono.error(first.getThrowable())
						: ServerResponse.ok().contentType(format.mediaType()).body(BodyInserters.fromDataBuffers(all)),
						false)
				// The records are sent when the response is written: completing or
				// cancelling here must not cancel them.
				.singleOrEmpty();
		});
	}

	/**
	 * The {@code ttl} parameter in seconds: absent is 0 (the value does not expire);
	 * otherwise 1 to {@link #MAX_TTL_SECONDS}, decimal digits only.
	 */
	static long ttl(@Nullable String text) {
		return (text == null) ? 0 : QueryParameters.positive(text, MAX_TTL_SECONDS,
				"ttl must be a whole number of seconds from 1 to " + MAX_TTL_SECONDS);
	}

	/** The {@code limit} parameter: absent is no limit. */
	static long limit(@Nullable String text) {
		return (text == null) ? Long.MAX_VALUE
				: QueryParameters.positive(text, MAX_LIMIT, "limit must be a positive integer up to " + MAX_LIMIT);
	}

	/** GET /v0/openapi.yaml: the OpenAPI 3 description of this API. */
	Mono<ServerResponse> openApi(ServerRequest request) {
		return ServerResponse.ok().contentType(YAML).cacheControl(CacheControl.noCache()).bodyValue(this.openApi);
	}

	/**
	 * Answers a route that reads no parameter: a query naming any is a 400, an empty one
	 * goes on to {@code next}.
	 */
	Mono<ServerResponse> withoutParameters(ServerRequest request, HandlerFunction<ServerResponse> next) {
		String query = request.uri().getRawQuery();
		if (query == null || query.isEmpty()) {
			return next.handle(request);
		}
		String route = request.method() + " " + request.requestPath().pathWithinApplication().value();
		return Mono.fromCallable(() -> QueryParameters.parse(query, QueryParameters.NONE, route))
			.then(Mono.defer(() -> next.handle(request)))
			.onErrorResume(ApiException.class, ErrorResponses::toResponse);
	}

	Mono<ServerResponse> methodNotAllowed(ServerRequest request) {
		String path = request.requestPath().pathWithinApplication().value();
		String allow = path.equals(ENTITY_PATH) ? "GET, HEAD, PUT, DELETE" : "GET";
		return ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
			.header(HttpHeaders.ALLOW, allow)
			.contentType(MediaType.TEXT_PLAIN)
			.bodyValue("method " + request.method() + " is not allowed on " + path + "; allowed: " + allow + "\n");
	}

	/**
	 * Parses the query, runs {@code body} and answers every failure with its status and
	 * text; stamps the answer with the ring's epoch ({@link EpochHeader}); times the
	 * request by operation and status.
	 */
	private Mono<ServerResponse> handle(String operation, ServerRequest request, int parameters, String route,
			Function<QueryParameters, Mono<ServerResponse>> body) {
		long start = System.nanoTime();
		return Mono.defer(() -> body.apply(QueryParameters.parse(request.uri().getRawQuery(), parameters, route)))
			.onErrorResume(ErrorResponses::toResponse)
			.doOnNext((response) -> {
				this.epoch.stamp(request.exchange().getResponse());
				this.metrics.record(operation, response.statusCode().value(), start);
			});
	}

	private Replicas replicas(QueryParameters query) {
		return ReplicasParameter.parse(query.text("replicas"), query.text("ack"), query.text("from"),
				this.replication.replicationFactor());
	}

}
