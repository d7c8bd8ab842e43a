package io.quorumkv.service.http;

import java.util.function.Function;

import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.replication.ReplicationService;
import io.quorumkv.service.replication.Replicas;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The public API of DESIGN §2: {@code /v0/status}, {@code /v0/entity} and
 * {@code /v0/entities}. Parses and checks the request, hands it to the
 * {@link ReplicationService}, and answers with a status and a short body for every
 * failure (see {@link ErrorResponses}).
 */
@Component
public class EntityHandler {

	private static final DataBufferFactory BUFFERS = DefaultDataBufferFactory.sharedInstance;

	private static final Reply NOT_FOUND = Reply.text(HttpStatus.NOT_FOUND, "not found");

	private final ReplicationService replication;

	private final Storage storage;

	private final RequestMetrics metrics;

	private final int maxKeySize;

	private final int maxBodySize;

	private final BodyBudget bodies;

	public EntityHandler(ReplicationService replication, Storage storage, RequestMetrics metrics, BodyBudget bodies,
			QuorumKvProperties properties) {
		this.bodies = bodies;
		this.replication = replication;
		this.storage = storage;
		this.metrics = metrics;
		this.maxKeySize = (int) properties.http().maxKeySize().toBytes();
		this.maxBodySize = (int) properties.http().maxBodySize().toBytes();
	}

	Mono<ServerResponse> status(ServerRequest request) {
		return handle("status", request, (query) -> {
			String failure = this.storage.stats().failure();
			return (failure == null) ? ErrorResponses.text(HttpStatus.OK, "OK")
					: ErrorResponses.text(HttpStatus.SERVICE_UNAVAILABLE, "storage failed: " + failure);
		});
	}

	Mono<ServerResponse> get(ServerRequest request) {
		return get(request.uri().getRawQuery()).flatMap(Reply::toServerResponse);
	}

	Mono<ServerResponse> put(ServerRequest request) {
		return put(request.uri().getRawQuery(), request.headers().contentLength().orElse(-1),
				(maxSize, use) -> this.bodies.read(request, maxSize, use))
			.flatMap(Reply::toServerResponse);
	}

	Mono<ServerResponse> delete(ServerRequest request) {
		return delete(request.uri().getRawQuery()).flatMap(Reply::toServerResponse);
	}

	/** GET /v0/entity with the raw query {@code rawQuery}: the value, or 404. */
	Mono<Reply> get(@Nullable String rawQuery) {
		return reply("get", rawQuery, (query) -> {
			byte[] key = query.key("id", this.maxKeySize);
			Replicas replicas = replicas(query);
			return this.replication.get(key, replicas)
				.filter((entry) -> !entry.isTombstone())
				.map((entry) -> Reply.binary(entry.value()))
				.defaultIfEmpty(NOT_FOUND);
		});
	}

	/**
	 * PUT /v0/entity: {@code contentLength} is the announced body size (-1 when chunked),
	 * {@code body} reads the body within {@link BodyBudget}.
	 */
	Mono<Reply> put(@Nullable String rawQuery, long contentLength, RequestBody body) {
		return reply("put", rawQuery, (query) -> {
			byte[] key = query.key("id", this.maxKeySize);
			Replicas replicas = replicas(query);
			if (contentLength > this.maxBodySize) {
				throw new ApiException(HttpStatus.CONTENT_TOO_LARGE,
						"request body too large: the limit is " + this.maxBodySize + " bytes");
			}
			return body.read(this.maxBodySize,
					(value) -> this.replication.write(key, value, replicas).thenReturn(Reply.CREATED));
		});
	}

	/** DELETE /v0/entity: writes a tombstone. */
	Mono<Reply> delete(@Nullable String rawQuery) {
		return reply("delete", rawQuery, (query) -> {
			byte[] key = query.key("id", this.maxKeySize);
			Replicas replicas = replicas(query);
			return this.replication.write(key, null, replicas).thenReturn(Reply.ACCEPTED);
		});
	}

	Mono<ServerResponse> range(ServerRequest request) {
		return handle("range", request, (query) -> {
			byte[] start = query.key("start", this.maxKeySize);
			byte[] end = query.optionalKey("end", this.maxKeySize);
			Flux<DataBuffer> records = this.replication.range(start, end).map(EntityHandler::record);
			// The status is decided by the first record (or the end, or an error: a range
			// needs
			// every node, and a node that cannot be reached fails it before anything is
			// sent).
			// Then one chunk per record; writeWith requests records as the socket drains.
			return records
				.switchOnFirst((first, all) -> first.isOnError() ? Mono.error(first.getThrowable())
						: ServerResponse.ok()
							.contentType(MediaType.APPLICATION_OCTET_STREAM)
							.body(BodyInserters.fromDataBuffers(all)),
						false)
				// The records are sent when the response is written: completing or
				// cancelling
				// here must not cancel them.
				.singleOrEmpty();
		});
	}

	Mono<ServerResponse> methodNotAllowed(ServerRequest request) {
		String allow = request.path().equals("/v0/entity") ? "GET, PUT, DELETE" : "GET";
		return ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
			.header(HttpHeaders.ALLOW, allow)
			.contentType(MediaType.TEXT_PLAIN)
			.bodyValue("method " + request.method() + " is not allowed on " + request.path() + "; allowed: " + allow
					+ "\n");
	}

	private Mono<ServerResponse> handle(String operation, ServerRequest request,
			Function<QueryParameters, Mono<ServerResponse>> body) {
		long start = System.nanoTime();
		return Mono.defer(() -> body.apply(QueryParameters.parse(request.uri().getRawQuery())))
			.onErrorResume(ErrorResponses::toResponse)
			.doOnNext((response) -> this.metrics.record(operation, response.statusCode().value(), start));
	}

	private Mono<Reply> reply(String operation, @Nullable String rawQuery,
			Function<QueryParameters, Mono<Reply>> body) {
		long start = System.nanoTime();
		return Mono.defer(() -> body.apply(QueryParameters.parse(rawQuery)))
			.onErrorResume((error) -> Mono.just(ErrorResponses.toReply(error)))
			.doOnNext((reply) -> this.metrics.record(operation, reply.status(), start));
	}

	private Replicas replicas(QueryParameters query) {
		return ReplicasParameter.parse(query.text("replicas"), query.text("ack"), query.text("from"),
				this.replication.clusterSize());
	}

	private static DataBuffer record(Entry entry) {
		byte[] key = entry.key();
		byte[] value = entry.value();
		DataBuffer buffer = BUFFERS.allocateBuffer(key.length + 1 + value.length);
		return buffer.write(key).write((byte) '\n').write(value);
	}

}
