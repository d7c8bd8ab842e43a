package io.quorumkv.service.http;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.ClockSkewException;
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
 * this runs ({@link InternalAuth}). A timestamp too far ahead of this node's clock is
 * refused ({@link ClockGuard}): a single write with 422 and
 * {@code X-QuorumKV-Refused: clock-skew}, a batch's write as a failed operation.
 */
@Component
class InternalHandler {

	/** Storage operations of one batch run at once (most complete at once anyway). */
	private static final int BATCH_CONCURRENCY = 32;

	private final Storage storage;

	private final ClockGuard clock;

	private final int maxKeySize;

	private final int maxBodySize;

	private final int maxBatchBody;

	private final BodyBudget bodies;

	InternalHandler(Storage storage, ClockGuard clock, BodyBudget bodies, QuorumKvProperties properties) {
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
				this.clock.accept(timestamp, ClockGuard.Source.WRITE, sender(request));
				// Both arrays are this request's own (its query parsed, its body joined).
				return this.storage.upsert(Entry.wrap(key, tombstone ? null : value, timestamp, expiresAt));
			}).then(Mono.defer(() -> ServerResponse.status(HttpStatus.CREATED).build()));
		}).onErrorResume(ClockSkewException.class, InternalHandler::refused).onErrorResume(ErrorResponses::toResponse);
	}

	/** 422 with {@code X-QuorumKV-Refused: clock-skew}: the sender's clock is ahead. */
	private static Mono<ServerResponse> refused(ClockSkewException refusal) {
		return ServerResponse.unprocessableContent()
			.header(InternalApi.REFUSED, InternalApi.REFUSED_CLOCK_SKEW)
			.contentType(MediaType.TEXT_PLAIN)
			.bodyValue(refusal.getMessage() + "\n");
	}

	/** The calling node as it names itself, or its address. */
	static String sender(ServerRequest request) {
		String from = request.headers().firstHeader(InternalApi.FROM);
		return (from != null) ? from : request.remoteAddress().map(Object::toString).orElse("an unknown peer");
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
			Result[] refusals = new Result[operations.size()];
			return write(operations, refusals, sender(request))
				.flatMap((written) -> Flux.range(0, operations.size()).flatMapSequential((index) -> {
					Operation operation = operations.get(index);
					if (operation.entry() == null) {
						return read(operation, answerBytes);
					}
					return Mono.just((refusals[index] != null) ? refusals[index] : written);
				}, BATCH_CONCURRENCY)
					.collectList()
					.<ServerResponse>map((results) -> Reply.binary(BatchCodec.encodeResponse(results))));
		})
			.onErrorMap(MalformedBatchException.class, (ex) -> ApiException.badRequest(ex.getMessage()))
			.onErrorResume(ErrorResponses::toResponse);
	}

	/**
	 * The result of every write of the batch: they are kept, or fail, together; but a
	 * write whose timestamp the clock refuses is left out and its refusal put in
	 * {@code refusals} at its index.
	 */
	private Mono<Result> write(List<Operation> operations, Result[] refusals, String sender) {
		List<Entry> entries = new ArrayList<>(operations.size());
		for (int i = 0; i < operations.size(); i++) {
			Entry entry = operations.get(i).entry();
			if (entry != null) {
				if (this.clock.admit(entry.timestamp(), ClockGuard.Source.BATCH, sender)) {
					entries.add(entry);
				}
				else {
					refusals[i] = Result.failed(ClockSkewException.class.getSimpleName() + ": "
							+ this.clock.refusal(entry.timestamp()).getMessage());
				}
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

	/**
	 * A page of a range read: this node's entries from {@code start} to {@code end}, at
	 * most {@code limit} (none when absent). {@code start} may be one byte over the key
	 * limit: a page after a key of the largest size starts at that key plus a zero byte.
	 */
	Mono<ServerResponse> scan(ServerRequest request) {
		return Mono.defer(() -> {
			QueryParameters query = QueryParameters.parse(request.uri().getRawQuery());
			byte[] start = query.key("start", this.maxKeySize + 1);
			byte[] end = query.optionalKey("end", this.maxKeySize);
			long limit = EntityHandler.limit(query.text("limit"));
			Flux<Entry> entries = this.storage.scan(start, end);
			return ServerResponse.ok()
				.contentType(MediaType.APPLICATION_OCTET_STREAM)
				.body(BodyInserters.fromDataBuffers(((limit < Long.MAX_VALUE) ? entries.take(limit, true) : entries)
					.map((entry) -> DefaultDataBufferFactory.sharedInstance.wrap(EntryFrame.encode(entry)))));
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
