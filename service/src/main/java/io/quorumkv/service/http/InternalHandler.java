package io.quorumkv.service.http;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.replication.BatchCodec;
import io.quorumkv.service.replication.BatchCodec.MalformedBatchException;
import io.quorumkv.service.replication.BatchCodec.Operation;
import io.quorumkv.service.replication.BatchCodec.Result;
import io.quorumkv.service.replication.InternalApi;
import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The replica side of the internal API ({@link InternalApi}): reads and writes this
 * node's storage with the coordinator's timestamps. The secret is checked before any of
 * this runs ({@link InternalAuth}).
 */
@Component
class InternalHandler {

	/** Storage operations of one batch run at once (most complete at once anyway). */
	private static final int BATCH_CONCURRENCY = 32;

	private final Storage storage;

	private final HybridLogicalClock clock;

	private final int maxKeySize;

	private final int maxBodySize;

	private final int maxBatchBody;

	private final BodyBudget bodies;

	InternalHandler(Storage storage, HybridLogicalClock clock, BodyBudget bodies, QuorumKvProperties properties) {
		this.bodies = bodies;
		this.storage = storage;
		this.clock = clock;
		this.maxKeySize = (int) properties.http().maxKeySize().toBytes();
		this.maxBodySize = (int) properties.http().maxBodySize().toBytes();
		this.maxBatchBody = InternalApi.maxBatchBody(properties.cluster().batch(), this.maxBodySize);
	}

	Mono<ServerResponse> get(ServerRequest request) {
		return Mono.defer(() -> {
			byte[] key = QueryParameters.parse(request.uri().getRawQuery()).key("id", this.maxKeySize);
			return this.storage.get(key)
				.flatMap((entry) -> ServerResponse.ok()
					.header(InternalApi.TIMESTAMP, Long.toString(entry.timestamp()))
					.header(InternalApi.TOMBSTONE, Boolean.toString(entry.isTombstone()))
					.headers((headers) -> {
						if (entry.expires()) {
							headers.set(InternalApi.EXPIRES_AT, Long.toString(entry.expiresAt()));
						}
					})
					.contentType(MediaType.APPLICATION_OCTET_STREAM)
					.bodyValue(entry.isTombstone() ? new byte[0] : entry.value()))
				.switchIfEmpty(Mono.defer(
						() -> ServerResponse.status(HttpStatus.NOT_FOUND).header(InternalApi.ABSENT, "true").build()));
		}).onErrorResume(ErrorResponses::toResponse);
	}

	Mono<ServerResponse> put(ServerRequest request) {
		return Mono.defer(() -> {
			byte[] key = QueryParameters.parse(request.uri().getRawQuery()).key("id", this.maxKeySize);
			long timestamp = parseTimestamp(InternalApi.TIMESTAMP,
					request.headers().firstHeader(InternalApi.TIMESTAMP));
			boolean tombstone = Boolean.parseBoolean(request.headers().firstHeader(InternalApi.TOMBSTONE));
			String expiry = request.headers().firstHeader(InternalApi.EXPIRES_AT);
			long expiresAt = (expiry != null) ? parseTimestamp(InternalApi.EXPIRES_AT, expiry) : Entry.NO_EXPIRY;
			if (tombstone && expiry != null) {
				throw ApiException.badRequest("a tombstone has no " + InternalApi.EXPIRES_AT);
			}
			return this.bodies.read(request, this.maxBodySize, (value) -> {
				this.clock.observe(timestamp);
				return this.storage.upsert(new Entry(key, tombstone ? null : value, timestamp, expiresAt));
			}).then(Mono.defer(() -> ServerResponse.status(HttpStatus.CREATED).build()));
		}).onErrorResume(ErrorResponses::toResponse);
	}

	/**
	 * Runs a batch of operations ({@link BatchCodec}) and answers one result each, in
	 * order. An operation the storage fails is answered as failed, the others as usual;
	 * gets whose entries would take the answer past its cap are answered "ask alone". The
	 * batch's writes go to the storage first, all at once ({@link Storage#upsertAll}: one
	 * WAL write on the LSM), then its reads, so that a read queued after a write of the
	 * same key sees it.
	 */
	Mono<ServerResponse> batch(ServerRequest request) {
		return this.bodies.read(request, this.maxBatchBody, (bytes) -> {
			List<Operation> operations = BatchCodec.decodeRequest(bytes, this.maxKeySize);
			AtomicLong answerBytes = new AtomicLong();
			return write(operations).flatMap((written) -> Flux.fromIterable(operations)
				.flatMapSequential(
						(operation) -> (operation.entry() != null) ? Mono.just(written) : read(operation, answerBytes),
						BATCH_CONCURRENCY)
				.collectList()
				.<ServerResponse>map((results) -> Reply.binary(BatchCodec.encodeResponse(results))));
		})
			.onErrorMap(MalformedBatchException.class, (ex) -> ApiException.badRequest(ex.getMessage()))
			.onErrorResume(ErrorResponses::toResponse);
	}

	/** The result of every write of the batch: they are kept, or fail, together. */
	private Mono<Result> write(List<Operation> operations) {
		List<Entry> entries = new ArrayList<>(operations.size());
		for (Operation operation : operations) {
			Entry entry = operation.entry();
			if (entry != null) {
				this.clock.observe(entry.timestamp());
				entries.add(entry);
			}
		}
		if (entries.isEmpty()) {
			return Mono.just(Result.KEPT);
		}
		return failedAsResult(this.storage.upsertAll(entries).thenReturn(Result.KEPT));
	}

	private Mono<Result> read(Operation operation, AtomicLong answerBytes) {
		return failedAsResult(this.storage.get(operation.key())
			.map((found) -> (answerBytes.addAndGet(BatchCodec.frameSize(found)) > this.maxBatchBody)
					? Result.RETRY_ALONE : Result.found(found))
			.defaultIfEmpty(Result.ABSENT));
	}

	private static Mono<Result> failedAsResult(Mono<Result> result) {
		return result.onErrorResume(RuntimeException.class,
				(error) -> Mono.just(Result.failed(error.getClass().getSimpleName() + ": " + error.getMessage())));
	}

	Mono<ServerResponse> scan(ServerRequest request) {
		return Mono.defer(() -> {
			QueryParameters query = QueryParameters.parse(request.uri().getRawQuery());
			byte[] start = query.key("start", this.maxKeySize);
			byte[] end = query.optionalKey("end", this.maxKeySize);
			return ServerResponse.ok()
				.contentType(MediaType.APPLICATION_OCTET_STREAM)
				.body(BodyInserters.fromDataBuffers(this.storage.scan(start, end)
					.map((entry) -> DefaultDataBufferFactory.sharedInstance.wrap(InternalApi.encode(entry)))));
		}).onErrorResume(ErrorResponses::toResponse);
	}

	private static long parseTimestamp(String name, String header) {
		if (header == null) {
			throw ApiException.badRequest("missing " + name);
		}
		try {
			return Long.parseLong(header);
		}
		catch (NumberFormatException ex) {
			throw ApiException.badRequest("malformed " + name);
		}
	}

}
