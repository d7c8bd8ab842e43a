package io.quorumkv.service.peer;

import java.net.URI;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.netty.util.concurrent.EventExecutor;
import io.quorumkv.service.cluster.ClockSkewException;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.ReplicaStreams.Links;

import io.quorumkv.service.peer.StreamFrames.Result;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Sinks;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
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
final class PeerStream implements Exchange.Events {

	private final Node peer;

	private final EventExecutor loop;

	private final WebClient client;

	private final PeerHealth health;

	private final Links links;

	private final StreamSettings settings;

	private final StreamMetrics.Peer metrics;

	private final Backoff backoff;

	private final URI uri;

	private final long timeoutNanos;

	private final InFlight pending;

	private final Outbox outbox;

	private @Nullable Exchange current;

	private long lastUsed;

	private boolean draining;

	PeerStream(Node peer, EventExecutor loop, WebClient client, CircuitBreaker breaker, Links links,
			StreamSettings settings, StreamMetrics.Peer metrics) {
		this.peer = peer;
		this.loop = loop;
		this.client = client;
		this.health = new PeerHealth(peer, breaker, links, metrics);
		this.backoff = new Backoff(settings.maxBackoff());
		this.links = links;
		this.settings = settings;
		this.metrics = metrics;
		this.uri = URI.create(peer.base() + ReplicaStreams.PATH);
		this.timeoutNanos = settings.timeout().toNanos();
		this.pending = new InFlight(loop, this.timeoutNanos, this::expire);
		this.outbox = new Outbox(loop, this::flush);
	}

	Node peer() {
		return this.peer;
	}

	EventExecutor loop() {
		return this.loop;
	}

	boolean waiting() {
		return this.backoff.waiting();
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
		if (!this.health.admits(operation)) {
			refuse(operation, "breaker-open", this.health.open());
			return;
		}
		if (this.current == null && this.backoff.holds(now) && !operation.probe) {
			this.health.release();
			refuse(operation, "error",
					new PeerException("no stream to " + this.peer + " (" + this.backoff.reason(now) + ")"));
			return;
		}
		if (this.pending.size() >= this.settings.maxInFlight()) {
			this.health.release();
			refuse(operation, "bulkhead-full", new PeerException(
					this.settings.maxInFlight() + " replica operations already in flight to " + this.peer));
			return;
		}
		if (operation.size() - StreamFrames.LENGTH > this.settings.maxFrameSize()) {
			this.health.release();
			refuse(operation, "error", new PeerException("a replica operation over the largest frame ("
					+ this.settings.maxFrameSize() + " bytes) for " + this.peer));
			return;
		}
		enqueue(operation, now);
	}

	private void enqueue(StreamOperation operation, long now) {
		this.pending.add(operation);
		this.lastUsed = now;
		if (this.current == null) {
			open();
		}
		this.outbox.add(operation);
	}

	private void refuse(StreamOperation operation, String outcome, Throwable error) {
		operation.done = true;
		this.health.refused(operation, outcome);
		operation.deliver(error);
	}

	/** Sends the operations of the turn in one chunk. */
	private void flush() {
		Exchange exchange = this.current;
		byte[] chunk = this.outbox.take(this.links.epoch(), this.timeoutNanos);
		if (exchange == null || chunk == null) {
			return;
		}
		this.metrics.chunks.increment();
		Sinks.EmitResult sent = exchange.send(DefaultDataBufferFactory.sharedInstance.wrap(chunk));
		if (sent.isFailure()) {
			ended(exchange, new PeerException("could not send on the stream to " + this.peer + ": " + sent));
		}
	}

	/** Opens an exchange; its answers and its end come back to this loop. */
	private void open() {
		this.current = Exchange.open(this.client, this.uri, this.peer, this.links, this.settings.maxFrameSize(),
				this.loop, this);
	}

	@Override
	public void opened(Exchange exchange, @Nullable String stamp) {
		if (exchange != this.current) {
			return;
		}
		exchange.markOpened(this.settings.heartbeat(), this::beat);
		this.backoff.reset();
		this.metrics.opened.increment();
		this.links.reached(this.peer);
		Exchange.newerRing(stamp, this.peer, this.links);
	}

	@Override
	public void received(Exchange exchange, DataBuffer buffer) {
		if (exchange != this.current) {
			DataBufferUtils.release(buffer);
			return;
		}
		try {
			exchange.results(buffer, this.settings.maxKeySize(), this::answer);
		}
		catch (EntryFrame.MalformedFrameException ex) {
			ended(exchange, new PeerException("malformed frame from " + this.peer + ": " + ex.getMessage()));
		}
	}

	private void answer(Result result) {
		StreamOperation operation = this.pending.answered(result.id());
		if (operation == null) {
			// Its deadline passed first: it has been answered with a timeout.
			return;
		}
		if (operation.accepts(result.type())) {
			this.health.succeeded(operation);
			operation.deliver(result);
			return;
		}
		Throwable error = this.health.failure(operation, result);
		this.health.failed(operation, "error", error);
		operation.deliver(error);
	}

	/** The deadline of {@code operation} passed unanswered ({@link InFlight}). */
	private void expire(StreamOperation operation) {
		TimeoutException timeout = new TimeoutException(
				"no answer from " + this.peer + " within " + TimeUnit.NANOSECONDS.toMillis(this.timeoutNanos) + " ms");
		this.health.failed(operation, "timeout", timeout);
		operation.deliver(timeout);
		if (operation instanceof StreamOperation.Ping && this.current != null) {
			// The peer answers nothing, not even heartbeats: a dead host or a lost link.
			ended(this.current, new PeerException(this.peer + " missed a heartbeat"));
		}
	}

	/**
	 * Ends {@code exchange}: every operation in flight fails with {@code error}, and its
	 * connection closes. A stream that never opened waits out a backoff.
	 */
	@Override
	public void ended(Exchange exchange, Throwable error) {
		if (exchange != this.current) {
			return;
		}
		this.current = null;
		exchange.dispose();
		boolean failedToOpen = !exchange.isOpened() && !(error instanceof StaleRingException);
		this.backoff.ended(error, failedToOpen);
		if (failedToOpen) {
			this.metrics.failedToOpen.increment();
		}
		Throwable failure = (error instanceof PeerException || error instanceof ClockSkewException) ? error
				: new PeerException("the stream to " + this.peer + " broke: " + error);
		this.outbox.clear();
		for (StreamOperation operation : this.pending.removeAll()) {
			this.health.failed(operation, "error", failure);
			operation.deliver(failure);
		}
	}

	/** The peer is known to be up: the next operation opens a stream at once. */
	void endBackoff() {
		this.backoff.reset();
	}

	/** A heartbeat, or the close of a stream idle for long. */
	private void beat() {
		Exchange exchange = this.current;
		if (exchange == null || !exchange.isOpened()) {
			return;
		}
		long now = System.nanoTime();
		if (this.pending.isEmpty() && now - this.lastUsed > this.settings.idleClose().toNanos()) {
			close(exchange);
			return;
		}
		StreamOperation.Ping ping = StreamOperation.Ping.clockSample(this.peer, this.links);
		ping.startNanos = now;
		long keepLastUsed = this.lastUsed;
		enqueue(ping, now);
		// A heartbeat is not a use: an idle stream still closes.
		this.lastUsed = keepLastUsed;
	}

	/** Ends the request body: the peer answers what it has and ends the stream. */
	private void close(Exchange exchange) {
		this.current = null;
		exchange.complete();
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
			exchange.complete();
		}
	}

	/** The loop is gone: fails what is in flight without it. */
	void abandon() {
		for (StreamOperation operation : this.pending.removeAll()) {
			operation.deliver(new PeerException("this node's event loops stopped"));
		}
	}

}
