package io.quorumkv.service.http;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.membership.RingSync;
import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.service.peer.FrameAssembler;
import io.quorumkv.service.peer.StreamFrames;
import io.quorumkv.service.peer.StreamFrames.Operation;
import io.quorumkv.service.peer.StreamFrames.Result;
import io.quorumkv.service.peer.StreamResults;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.StreamProperties;
import io.quorumkv.service.peer.StreamService;
import io.quorumkv.service.security.InternalAuth;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The replica side of a replica stream ({@code POST /internal/v0/stream},
 * {@link StreamFrames}): maps the request's stream of operations to a stream of results.
 * The secret and the caller's ring were checked when the stream opened
 * ({@link InternalAuth}, {@link RingGate}); each operation carries the caller's epoch of
 * when it was sent, checked again here: an older one is answered "stale ring", a newer
 * one waits until this node has caught up.
 *
 * <p>
 * The operations that one network buffer completes are served together: their writes go
 * to the storage first, all at once ({@link Storage#upsertAll}: one WAL write on the
 * LSM), then the features' calls ({@link StreamFrames#CALL}: each to the
 * {@link StreamService} its service byte names, such as the Paxos acceptor), then their
 * reads, so that a read sent after a write of the same key sees it. At most
 * {@link #CONCURRENCY} such groups are served at once; the request body is read no faster
 * than that (backpressure to the caller's socket). A malformed or oversized frame ends
 * the stream (the connection closes; nothing after it is applied).
 *
 * <p>
 * When the node begins to stop, every stream stops reading, answers what it has read and
 * ends: the caller fails what it sent after that and opens a stream to another time or
 * node, and the web server's graceful shutdown, which waits for requests in progress, is
 * not held up by streams that would never end by themselves.
 */
@Component
class ReplicaStreamHandler implements ApplicationListener<ContextClosedEvent> {

	/** Groups of operations served at once on one stream. */
	static final int CONCURRENCY = 32;

	/** Reads of one group run at once. */
	private static final int READ_CONCURRENCY = 32;

	private final Storage storage;

	private final ClockGuard clock;

	private final ClusterState state;

	private final RingSync sync;

	private final int maxKeySize;

	private final int maxValueSize;

	private final int maxFrameSize;

	/**
	 * The features' protocols on the stream ({@link StreamFrames#CALL}), resolved once.
	 */
	private final ObjectProvider<StreamService> serviceBeans;

	private volatile @Nullable StreamService @Nullable [] services;

	/** Completes when the node begins to stop. */
	private final Sinks.Empty<Void> stopping = Sinks.empty();

	private volatile boolean stopped;

	ReplicaStreamHandler(Storage storage, ClockGuard clock, ClusterState state, RingSync sync, HttpProperties limits,
			StreamProperties stream, ObjectProvider<StreamService> services) {
		this.serviceBeans = services;
		this.storage = storage;
		this.clock = clock;
		this.state = state;
		this.sync = sync;
		this.maxKeySize = (int) limits.maxKeySize().toBytes();
		this.maxValueSize = (int) limits.maxBodySize().toBytes();
		this.maxFrameSize = InternalApi.maxFrame(stream, this.maxValueSize);
	}

	Mono<ServerResponse> stream(ServerRequest request) {
		if (this.stopped) {
			return Mono.just(Reply.retryLater("this node is stopping"));
		}
		String sender = InternalHandler.sender(request);
		RingStamp caller = RingStamp.parse(request.headers().firstHeader(InternalApi.RING));
		FrameAssembler frames = new FrameAssembler(this.maxFrameSize);
		Flux<DataBuffer> answers = request.body(BodyExtractors.toDataBuffers())
			.takeUntilOther(this.stopping.asMono())
			.flatMap((buffer) -> {
				long received = System.nanoTime();
				List<Operation> operations = new ArrayList<>();
				frames.feed(buffer, (frame) -> operations
					.add(StreamFrames.readOperation(frame, this.maxKeySize, this.maxValueSize)));
				return operations.isEmpty() ? Mono.empty() : serve(operations, received, caller, sender);
			}, CONCURRENCY)
			// Before the first answer a malformed stream is a 400; after it, the
			// connection closes.
			.onErrorMap(EntryFrame.MalformedFrameException.class,
					(ex) -> ApiException.badRequest("malformed replica stream: " + ex.getMessage()));
		return ServerResponse.ok()
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.body(BodyInserters.fromDataBuffers(answers));
	}

	@Override
	public void onApplicationEvent(ContextClosedEvent event) {
		this.stopped = true;
		this.stopping.tryEmitEmpty();
	}

	/** The results of one group, in one buffer. */
	private Mono<DataBuffer> serve(List<Operation> operations, long received, @Nullable RingStamp caller,
			String sender) {
		long ahead = 0;
		for (Operation operation : operations) {
			ahead = Math.max(ahead, operation.epoch());
		}
		if (ahead > this.state.epoch()) {
			if (caller == null) {
				return Mono.just(encode(failAll(operations, "this node is behind the call's epoch " + ahead)));
			}
			long epoch = ahead;
			return this.sync.catchUp(caller.node(), epoch)
				.then(Mono.defer(() -> serveNow(operations, received, sender)))
				.onErrorResume((error) -> Mono.just(encode(failAll(operations, "this node is behind the call's epoch "
						+ epoch + " and could not catch up: " + error.getMessage()))));
		}
		return serveNow(operations, received, sender);
	}

	private Mono<DataBuffer> serveNow(List<Operation> operations, long received, String sender) {
		long epoch = this.state.epoch();
		long now = System.nanoTime();
		List<Result> results = new ArrayList<>(operations.size());
		List<Operation> writes = new ArrayList<>();
		List<Entry> entries = new ArrayList<>();
		List<Operation> reads = new ArrayList<>();
		List<Operation> calls = new ArrayList<>();
		for (Operation operation : operations) {
			if (operation.kind() == StreamFrames.PING) {
				results.add(Result.pong(operation.id(), this.clock.clock().wallMicros()));
			}
			else if (operation.epoch() < epoch && operation.epoch() != 0) {
				results.add(Result.staleRing(operation.id(), epoch));
			}
			else if (now - received > TimeUnit.MILLISECONDS.toNanos(operation.budgetMillis())) {
				results.add(Result.expired(operation.id()));
			}
			else if (operation.kind() == StreamFrames.CALL) {
				calls.add(operation);
			}
			else if (operation.entry() != null) {
				Entry entry = operation.entry();
				if (this.clock.admit(entry.timestamp(), ClockGuard.Source.BATCH, sender)) {
					writes.add(operation);
					entries.add(entry);
				}
				else {
					results.add(Result.clockSkew(operation.id(), this.clock.refusal(entry.timestamp()).getMessage()));
				}
			}
			else {
				reads.add(operation);
			}
		}
		Mono<List<Result>> written = entries.isEmpty() ? Mono.just(List.of())
				: this.storage.upsertAll(entries)
					.then(Mono.fromCallable(() -> writes.stream().map((w) -> Result.kept(w.id())).toList()))
					.onErrorResume(RuntimeException.class, (error) -> Mono
						.just(failAll(writes, error.getClass().getSimpleName() + ": " + error.getMessage())));
		return written.flatMap((kept) -> {
			results.addAll(kept);
			if (!calls.isEmpty()) {
				return Flux.fromIterable(calls)
					.flatMap((call) -> call(call, sender), READ_CONCURRENCY)
					.collectList()
					.flatMap((answered) -> {
						results.addAll(answered);
						return read(reads, results);
					});
			}
			return read(reads, results);
		});
	}

	/** A feature's call, answered by its {@link StreamService}. */
	private Mono<Result> call(Operation call, String sender) {
		StreamService service = service(call.service());
		if (service == null) {
			return Mono.just(Result.failed(call.id(), "no service " + call.service() + " on this node"));
		}
		return Mono.defer(() -> service.serve(call.payload(), sender))
			.map((reply) -> Result.reply(call.id(), reply))
			.onErrorResume(RuntimeException.class, (error) -> Mono
				.just(Result.failed(call.id(), error.getClass().getSimpleName() + ": " + error.getMessage())));
	}

	private @Nullable StreamService service(byte id) {
		@Nullable StreamService[] known = this.services;
		if (known == null) {
			known = new StreamService[256];
			for (StreamService service : this.serviceBeans.orderedStream().toList()) {
				known[service.service() & 0xFF] = service;
			}
			this.services = known;
		}
		return known[id & 0xFF];
	}

	private Mono<DataBuffer> read(List<Operation> reads, List<Result> results) {
		if (reads.isEmpty()) {
			return Mono.just(encode(results));
		}
		return Flux.fromIterable(reads)
			.flatMap(
					(read) -> this.storage.get(read.key())
						.map((found) -> Result.found(read.id(), found))
						.defaultIfEmpty(Result.found(read.id(), null))
						.onErrorResume(RuntimeException.class,
								(error) -> Mono.just(Result.failed(read.id(),
										error.getClass().getSimpleName() + ": " + error.getMessage()))),
					READ_CONCURRENCY)
			.collectList()
			.map((found) -> {
				results.addAll(found);
				return encode(results);
			});
	}

	private List<Result> failAll(List<Operation> operations, String reason) {
		List<Result> failed = new ArrayList<>(operations.size());
		for (Operation operation : operations) {
			failed.add((operation.kind() == StreamFrames.PING)
					? Result.pong(operation.id(), this.clock.clock().wallMicros())
					: Result.failed(operation.id(), reason));
		}
		return failed;
	}

	private static DataBuffer encode(List<Result> results) {
		ByteBuffer out = StreamResults.encode(results);
		return DefaultDataBufferFactory.sharedInstance.wrap(out.array());
	}

}
