package io.quorumkv.service.peer;

import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.EventExecutor;
import io.quorumkv.service.cluster.ClockSkewException;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.peer.ReplicaStreams.Links;
import io.quorumkv.service.peer.ReplicaStreams.Settings;
import io.quorumkv.service.peer.StreamFrames.Result;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The stream of replica operations from this node's loop {@link #loop()} to one peer
 * ({@link ReplicaStreams}). Every method runs on that loop (answers arriving on another
 * thread are handed to it), so nothing here is locked: the map of operations in flight,
 * the operations of the current turn, the exchange under way.
 *
 * <p>
 * One exchange at a time: opened by the first operation, kept open by heartbeats, closed
 * when idle, and ended by any failure, which fails every operation in flight at once. A
 * failure to open makes the next operations fail at once for a backoff that doubles (up
 * to the configured longest) until an exchange opens again or the peer is known to be up.
 */
final class PeerStream {

	/** The header of the ring a call is made under ({@link RingStamp}). */
	static final String RING_HEADER = "X-QuorumKV-Ring";

	private static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private final Node peer;

	private final EventExecutor loop;

	private final WebClient client;

	private final CircuitBreaker breaker;

	private final Links links;

	private final Settings settings;

	private final StreamMetrics.Peer metrics;

	private final URI uri;

	private final long timeoutNanos;

	private final IntObjectHashMap<StreamOperation> pending = new IntObjectHashMap<>();

	/** The operations of this turn, sent together at its end. */
	private final List<StreamOperation> outbox = new ArrayList<>();

	/**
	 * The operations in flight in the order of their deadlines, which is the order they
	 * were sent in (one timeout for all). One timer, armed for the first, sweeps them;
	 * answered ones leave the front as soon as they reach it. A timer per operation cost
	 * a schedule and a cancel of the loop's timer queue per replica operation.
	 */
	private final ArrayDeque<StreamOperation> byDeadline = new ArrayDeque<>();

	private @Nullable ScheduledFuture<?> sweep;

	private boolean flushQueued;

	private int nextId;

	private @Nullable Exchange current;

	private long backoffUntil;

	/** Waiting out a backoff: read off the loop, to skip waking it for nothing. */
	private volatile boolean waiting;

	private int failedOpens;

	private String lastFailure = "";

	private long lastUsed;

	private @Nullable ScheduledFuture<?> heartbeat;

	private boolean draining;

	private String lastOutcome = "";

	PeerStream(Node peer, EventExecutor loop, WebClient client, CircuitBreaker breaker, Links links, Settings settings,
			StreamMetrics.Peer metrics) {
		this.peer = peer;
		this.loop = loop;
		this.client = client;
		this.breaker = breaker;
		this.links = links;
		this.settings = settings;
		this.metrics = metrics;
		this.uri = URI.create(peer.base() + ReplicaStreams.PATH);
		this.timeoutNanos = settings.timeout().toNanos();
	}

	Node peer() {
		return this.peer;
	}

	EventExecutor loop() {
		return this.loop;
	}

	boolean waiting() {
		return this.waiting;
	}

	int inFlight() {
		return this.pending.size();
	}

	void submit(StreamOperation operation) {
		long now = System.nanoTime();
		operation.startNanos = now;
		if (this.draining) {
			refuse(operation, "shutting-down", new PeerException("this node is shutting down"));
			return;
		}
		if (!this.breaker.tryAcquirePermission() && !operation.probe) {
			refuse(operation, "breaker-open", CallNotPermittedException.createCallNotPermittedException(this.breaker));
			return;
		}
		if (this.current == null && now - this.backoffUntil < 0 && !operation.probe) {
			this.breaker.releasePermission();
			refuse(operation, "error", new PeerException("no stream to " + this.peer + " (" + this.lastFailure
					+ "); the next try in " + TimeUnit.NANOSECONDS.toMillis(this.backoffUntil - now) + " ms"));
			return;
		}
		if (this.pending.size() >= this.settings.maxInFlight()) {
			this.breaker.releasePermission();
			refuse(operation, "bulkhead-full", new PeerException(
					this.settings.maxInFlight() + " replica operations already in flight to " + this.peer));
			return;
		}
		if (operation.size() - StreamFrames.LENGTH > this.settings.maxFrameSize()) {
			this.breaker.releasePermission();
			refuse(operation, "error", new PeerException("a replica operation over the largest frame ("
					+ this.settings.maxFrameSize() + " bytes) for " + this.peer));
			return;
		}
		enqueue(operation, now);
	}

	private void enqueue(StreamOperation operation, long now) {
		do {
			operation.id = this.nextId++;
		}
		while (this.pending.containsKey(operation.id));
		this.pending.put(operation.id, operation);
		this.byDeadline.addLast(operation);
		if (this.sweep == null) {
			armSweep(this.timeoutNanos);
		}
		this.lastUsed = now;
		if (this.current == null) {
			open();
		}
		this.outbox.add(operation);
		if (!this.flushQueued) {
			this.flushQueued = true;
			EventLoops.afterTurn(this.loop, this::flush);
		}
	}

	private void refuse(StreamOperation operation, String outcome, Throwable error) {
		operation.done = true;
		record(operation, outcome, operation.startNanos);
		signal(operation, error);
	}

	/** Sends the operations of the turn in one chunk. */
	private void flush() {
		this.flushQueued = false;
		Exchange exchange = this.current;
		if (exchange == null || this.outbox.isEmpty()) {
			this.outbox.clear();
			return;
		}
		int size = 0;
		for (StreamOperation operation : this.outbox) {
			size += operation.done ? 0 : operation.size();
		}
		if (size == 0) {
			this.outbox.clear();
			return;
		}
		ByteBuffer chunk = ByteBuffer.allocate(size);
		long epoch = this.links.epoch();
		long now = System.nanoTime();
		for (StreamOperation operation : this.outbox) {
			if (!operation.done) {
				long left = operation.startNanos + this.timeoutNanos - now;
				operation.encode(chunk, epoch, (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
			}
		}
		this.outbox.clear();
		this.metrics.chunks.increment();
		Sinks.EmitResult sent = exchange.out.tryEmitNext(DefaultDataBufferFactory.sharedInstance.wrap(chunk.array()));
		if (sent.isFailure()) {
			end(exchange, new PeerException("could not send on the stream to " + this.peer + ": " + sent));
		}
	}

	/** Opens an exchange; its answers and its end come back to this loop. */
	private void open() {
		Exchange exchange = new Exchange(this.settings.maxFrameSize());
		this.current = exchange;
		exchange.subscription = this.client.post().uri(this.uri).headers((headers) -> {
			String stamp = this.links.stamp();
			if (stamp != null) {
				headers.set(RING_HEADER, stamp);
			}
		})
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.body(BodyInserters.fromDataBuffers(exchange.out.asFlux()))
			.exchangeToFlux((response) -> {
				if (response.statusCode().value() == 200) {
					String stamp = response.headers().asHttpHeaders().getFirst(RING_HEADER);
					onLoop(() -> opened(exchange, stamp));
					return response.bodyToFlux(DataBuffer.class);
				}
				return refused(response).flux();
			})
			.subscribe((buffer) -> onLoop(() -> received(exchange, buffer), () -> DataBufferUtils.release(buffer)),
					(error) -> onLoop(() -> end(exchange, error), () -> {
					}), () -> onLoop(() -> end(exchange, new PeerException(this.peer + " ended the stream")), () -> {
					}));
	}

	private Mono<DataBuffer> refused(ClientResponse response) {
		int status = response.statusCode().value();
		String stamp = response.headers().asHttpHeaders().getFirst(RING_HEADER);
		return response.bodyToMono(String.class).defaultIfEmpty("").flatMap((body) -> {
			String message = this.peer + " refused the stream: " + status + " " + body.strip();
			if (status == 409 && stamp != null) {
				long epoch = RingStamp.epochOf(stamp);
				if (epoch > this.links.epoch()) {
					this.links.newerRing(this.peer, stamp, epoch);
				}
				return Mono.error(new StaleRingException(message));
			}
			return Mono.error(new PeerException(message));
		});
	}

	private void opened(Exchange exchange, @Nullable String stamp) {
		if (exchange != this.current) {
			return;
		}
		exchange.opened = true;
		this.failedOpens = 0;
		this.backoffUntil = 0;
		this.waiting = false;
		this.metrics.opened.increment();
		this.links.reached(this.peer);
		if (stamp != null) {
			long epoch = RingStamp.epochOf(stamp);
			if (epoch > this.links.epoch()) {
				this.links.newerRing(this.peer, stamp, epoch);
			}
		}
		long every = this.settings.heartbeat().toNanos();
		this.heartbeat = this.loop.scheduleAtFixedRate(this::beat, every, every, TimeUnit.NANOSECONDS);
	}

	private void received(Exchange exchange, DataBuffer buffer) {
		if (exchange != this.current) {
			DataBufferUtils.release(buffer);
			return;
		}
		try {
			exchange.in.feed(buffer, (frame) -> answer(
					StreamFrames.readResult(frame, this.settings.maxKeySize(), this.settings.maxFrameSize())));
		}
		catch (EntryFrame.MalformedFrameException ex) {
			end(exchange, new PeerException("malformed frame from " + this.peer + ": " + ex.getMessage()));
		}
	}

	private void answer(Result result) {
		StreamOperation operation = this.pending.remove(result.id());
		if (operation == null) {
			// Its deadline passed first: it has been answered with a timeout.
			return;
		}
		finish(operation);
		trim();
		long took = System.nanoTime() - operation.startNanos;
		if (operation.accepts(result.type())) {
			this.breaker.onSuccess(took, TimeUnit.NANOSECONDS);
			CircuitBreaker.State state = this.breaker.getState();
			if (state == CircuitBreaker.State.HALF_OPEN) {
				closeBreaker();
			}
			else if (state == CircuitBreaker.State.OPEN) {
				// A probe got through: the peer is back.
				this.links.reached(this.peer);
			}
			record(operation, "success", operation.startNanos);
			try {
				operation.answer(result);
			}
			catch (RuntimeException ex) {
				LoggerHolder.logger.error("A replica operation's subscriber failed on its answer", ex);
			}
			return;
		}
		Throwable error = switch (result.type()) {
			case StreamFrames.STALE_RING -> {
				this.links.newerRing(this.peer, null, result.number());
				yield new StaleRingException(
						this.peer + " serves epoch " + result.number() + ", newer than the call's");
			}
			case StreamFrames.CLOCK_SKEW -> new ClockSkewException(this.peer + " refused: " + result.reason(), 0);
			case StreamFrames.FAILED ->
				new PeerException(this.peer + " failed a replica operation: " + result.reason());
			case StreamFrames.EXPIRED -> new PeerException(this.peer + " got the operation after its deadline");
			default -> new PeerException(this.peer + " answered a " + operation.name() + " with type " + result.type());
		};
		this.breaker.onError(took, TimeUnit.NANOSECONDS, error);
		record(operation, "error", operation.startNanos);
		signal(operation, error);
	}

	/**
	 * A half-open breaker closes at its first successful call: that call has just shown
	 * the peer answers. Otherwise it would judge the peer by all of its trial calls, and
	 * those started while the peer was still coming back (refused, timed out) would open
	 * it again right after a client's request had got through, failing the next ones at
	 * once with every replica up. Done here, where the one success is seen, rather than
	 * by one more consumer of the breaker's success events, called for every successful
	 * replica operation.
	 */
	private void closeBreaker() {
		try {
			this.breaker.transitionToClosedState();
		}
		catch (IllegalStateException ex) {
			// Another loop's call moved it first: nothing to do.
		}
	}

	private void armSweep(long delayNanos) {
		this.sweep = this.loop.schedule(this::sweep, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
	}

	/** Drops the answered operations at the front of {@link #byDeadline}. */
	private void trim() {
		StreamOperation first = this.byDeadline.peekFirst();
		while (first != null && first.done) {
			this.byDeadline.pollFirst();
			first = this.byDeadline.peekFirst();
		}
	}

	/** Times out every operation whose deadline has passed, then waits for the next. */
	private void sweep() {
		this.sweep = null;
		long now = System.nanoTime();
		StreamOperation first = this.byDeadline.peekFirst();
		while (first != null) {
			if (!first.done) {
				long left = first.startNanos + this.timeoutNanos - now;
				if (left > 0) {
					armSweep(left);
					return;
				}
				this.byDeadline.pollFirst();
				expire(first);
			}
			else {
				this.byDeadline.pollFirst();
			}
			first = this.byDeadline.peekFirst();
		}
	}

	private void expire(StreamOperation operation) {
		if (operation.done) {
			return;
		}
		this.pending.remove(operation.id);
		operation.done = true;
		long took = System.nanoTime() - operation.startNanos;
		TimeoutException timeout = new TimeoutException(
				"no answer from " + this.peer + " within " + TimeUnit.NANOSECONDS.toMillis(this.timeoutNanos) + " ms");
		this.breaker.onError(took, TimeUnit.NANOSECONDS, timeout);
		record(operation, "timeout", operation.startNanos);
		signal(operation, timeout);
		if (operation instanceof StreamOperation.Ping && this.current != null) {
			// The peer answers nothing, not even heartbeats: a dead host or a lost link.
			end(this.current, new PeerException(this.peer + " missed a heartbeat"));
		}
	}

	/**
	 * Ends {@code exchange}: every operation in flight fails with {@code error}, and its
	 * connection closes. A stream that never opened waits out a backoff.
	 */
	private void end(Exchange exchange, Throwable error) {
		if (exchange != this.current) {
			return;
		}
		this.current = null;
		if (this.heartbeat != null) {
			this.heartbeat.cancel(false);
			this.heartbeat = null;
		}
		exchange.subscription.dispose();
		this.lastFailure = String.valueOf(error.getMessage());
		if (!exchange.opened && !(error instanceof StaleRingException)) {
			this.failedOpens++;
			this.metrics.failedToOpen.increment();
			long backoff = Math.min(this.settings.maxBackoff().toNanos(),
					FIRST_BACKOFF_NANOS << Math.min(this.failedOpens - 1, 20));
			this.backoffUntil = System.nanoTime() + backoff;
			this.waiting = true;
		}
		Throwable failure = (error instanceof PeerException || error instanceof ClockSkewException) ? error
				: new PeerException("the stream to " + this.peer + " broke: " + error);
		List<StreamOperation> failed = new ArrayList<>(this.pending.values());
		this.pending.clear();
		this.outbox.clear();
		this.byDeadline.clear();
		for (StreamOperation operation : failed) {
			finish(operation);
			this.breaker.onError(System.nanoTime() - operation.startNanos, TimeUnit.NANOSECONDS, failure);
			record(operation, "error", operation.startNanos);
			signal(operation, failure);
		}
	}

	/** The peer is known to be up: the next operation opens a stream at once. */
	void endBackoff() {
		this.waiting = false;
		this.backoffUntil = 0;
		this.failedOpens = 0;
	}

	/** A heartbeat, or the close of a stream idle for long. */
	private void beat() {
		Exchange exchange = this.current;
		if (exchange == null || !exchange.opened) {
			return;
		}
		long now = System.nanoTime();
		if (this.pending.isEmpty() && now - this.lastUsed > this.settings.idleClose().toNanos()) {
			close(exchange);
			return;
		}
		long sent = this.links.wallMicros();
		StreamOperation.Ping ping = new StreamOperation.Ping(new ReplicaStreams.Callback<>() {

			@Override
			public void answered(Long peerMicros) {
				PeerStream.this.links.clockSample(PeerStream.this.peer, sent, PeerStream.this.links.wallMicros(),
						peerMicros);
			}

			@Override
			public void failed(Throwable error) {
				// A missed heartbeat ends the stream (expire); nothing more to do.
			}

		});
		ping.startNanos = now;
		long keepLastUsed = this.lastUsed;
		enqueue(ping, now);
		// A heartbeat is not a use: an idle stream still closes.
		this.lastUsed = keepLastUsed;
	}

	/** Ends the request body: the peer answers what it has and ends the stream. */
	private void close(Exchange exchange) {
		this.current = null;
		if (this.heartbeat != null) {
			this.heartbeat.cancel(false);
			this.heartbeat = null;
		}
		exchange.out.tryEmitComplete();
	}

	/**
	 * At shutdown: no new operation; the ones in flight are answered by the peer (the
	 * exchange stays until it ends) or fail at their deadline.
	 */
	void drain() {
		this.draining = true;
		flush();
		Exchange exchange = this.current;
		if (exchange != null) {
			exchange.out.tryEmitComplete();
		}
	}

	/** The loop is gone: fails what is in flight without it. */
	void abandon() {
		List<StreamOperation> failed = new ArrayList<>(this.pending.values());
		this.pending.clear();
		this.byDeadline.clear();
		for (StreamOperation operation : failed) {
			signal(operation, new PeerException("this node's event loops stopped"));
		}
	}

	private void record(StreamOperation operation, String outcome, long startNanos) {
		this.metrics.record(operation.name(), outcome, startNanos);
		if (!outcome.equals(this.lastOutcome) && !(operation instanceof StreamOperation.Ping)) {
			this.lastOutcome = outcome;
			this.links.outcome(this.peer, outcome);
		}
	}

	private static void finish(StreamOperation operation) {
		operation.done = true;
	}

	private static void signal(StreamOperation operation, Throwable error) {
		try {
			operation.fail(error);
		}
		catch (RuntimeException ex) {
			LoggerHolder.logger.error("A replica operation's subscriber failed on its failure", ex);
		}
	}

	/** Runs {@code task} on this stream's loop; {@code orElse} when the loop is gone. */
	private void onLoop(Runnable task, Runnable orElse) {
		if (this.loop.inEventLoop()) {
			task.run();
			return;
		}
		try {
			this.loop.execute(task);
		}
		catch (RejectedExecutionException ex) {
			orElse.run();
		}
	}

	private void onLoop(Runnable task) {
		onLoop(task, () -> {
		});
	}

	/** One exchange: its request body, its answer's frames, its subscription. */
	private static final class Exchange {

		final Sinks.Many<DataBuffer> out = Sinks.many().unicast().onBackpressureBuffer();

		final FrameAssembler in;

		boolean opened;

		Disposable subscription = () -> {
		};

		Exchange(int maxFrameSize) {
			this.in = new FrameAssembler(maxFrameSize);
		}

	}

	private static final class LoggerHolder {

		static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(PeerStream.class);

	}

}
