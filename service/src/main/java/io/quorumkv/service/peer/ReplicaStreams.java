package io.quorumkv.service.peer;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.util.concurrent.EventExecutor;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * Replica reads and writes to the other nodes, as streams inside the one
 * {@link WebClient}: for each peer and each event loop of this node, one long-lived
 * exchange ({@code POST /internal/v0/stream}) whose request body is a stream of operation
 * frames and whose answer is a stream of result frames matched by id
 * ({@link StreamFrames}). An operation issued on loop L goes out on L's stream, and its
 * answer is handled on L; an operation issued off the loops is handed to one of them. The
 * operations of one turn of a loop leave in one chunk.
 *
 * <p>
 * Every operation is answered exactly once: with its result, with a timeout at its
 * deadline, or with the failure of its stream. A stream bounds the operations in flight
 * (more are refused at once), breaks on a malformed or oversized frame, and reconnects on
 * the next operation after a backoff that grows while connecting fails. The peer's
 * circuit breaker sees every operation.
 */
public final class ReplicaStreams implements AutoCloseable {

	/** The path of the stream on the internal API. */
	public static final String PATH = "/internal/v0/stream";

	private final WebClient client;

	private final EventExecutor[] loops;

	private final Function<Node, CircuitBreaker> breakers;

	private final Links links;

	private final StreamSettings settings;

	private final StreamMetrics metrics;

	private final Map<String, PeerStream[]> streams = new ConcurrentHashMap<>();

	private final AtomicInteger handOff = new AtomicInteger();

	private volatile boolean closed;

	/**
	 * @param client the node's one {@code WebClient} (its connection pool, TLS, secret
	 * and sender headers)
	 * @param loops the node's event loops
	 * @param breakers each peer's circuit breaker
	 * @param links what the streams tell and ask the rest of the node
	 */
	public ReplicaStreams(WebClient client, EventExecutor[] loops, Function<Node, CircuitBreaker> breakers, Links links,
			StreamSettings settings, MeterRegistry meters) {
		this.client = client;
		this.loops = loops.clone();
		this.breakers = breakers;
		this.links = links;
		this.settings = settings;
		this.metrics = new StreamMetrics(meters);
	}

	/**
	 * What a stream needs of the rest of the node: the ring it stamps operations with,
	 * and where it reports what it learns.
	 */
	public interface Links {

		/**
		 * This node's ring stamp for the stream's opening call; null while it has none.
		 */
		@Nullable String stamp();

		/** This node's ring epoch now. */
		long epoch();

		/** A peer answered from a newer epoch than this node's. */
		void newerRing(Node peer, @Nullable String stamp, long epoch);

		/** This node's wall clock in microseconds. */
		long wallMicros();

		/** A round trip to the peer: sent and received on this node's clock. */
		void clockSample(Node peer, long sentMicros, long receivedMicros, long peerMicros);

		/** A stream to the peer opened: the peer is up. */
		void reached(Node peer);

		/**
		 * The outcome of an operation to the peer ({@code success}, {@code timeout},
		 * {@code breaker-open}, ...), told when it differs from the one before.
		 */
		void outcome(Node peer, String outcome);

	}

	/** The answer to one operation, called exactly once on the stream's loop. */
	public interface Callback<T> {

		void answered(T value);

		void failed(Throwable error);

	}

	/** Reads the peer's entry of {@code key} (empty when it never saw the key). */
	public void get(Node peer, byte[] key, Callback<Optional<Entry>> callback) {
		get(peer, key, false, callback);
	}

	/**
	 * Reads the peer's entry of {@code key}.
	 * @param probe whether to try the peer even while its breaker is open or its stream
	 * waits out a backoff (a request that needs every replica fails for certain without
	 * it; its success is the evidence that closes the breaker)
	 */
	public void get(Node peer, byte[] key, boolean probe, Callback<Optional<Entry>> callback) {
		submit(peer, new StreamOperation.Get(key, callback), probe);
	}

	/** Sends {@code entry} to the peer, which keeps the greater of it and its own. */
	public void upsert(Node peer, Entry entry, Callback<Void> callback) {
		upsert(peer, entry, false, callback);
	}

	/**
	 * Sends {@code entry} to the peer; on {@code probe} see
	 * {@link #get(Node, byte[], boolean, Callback)}.
	 */
	public void upsert(Node peer, Entry entry, boolean probe, Callback<Void> callback) {
		submit(peer, new StreamOperation.Upsert(entry, callback), probe);
	}

	/**
	 * Sends a feature's message to the peer's {@link StreamService} of {@code service};
	 * answered with that service's reply, or failed as any operation is (timeout, broken
	 * stream, stale ring, the service's failure).
	 */
	public void call(Node peer, byte service, byte[] payload, Callback<byte[]> callback) {
		submit(peer, new StreamOperation.Call(service, payload, callback), false);
	}

	/** {@link #call(Node, byte, byte[], Callback)} as a {@link Mono}. */
	public Mono<byte[]> call(Node peer, byte service, byte[] payload) {
		return Mono.create((sink) -> call(peer, service, payload, callback(sink::success, sink::error)));
	}

	public Mono<Optional<Entry>> get(Node peer, byte[] key) {
		return Mono.create((sink) -> get(peer, key, callback(sink::success, sink::error)));
	}

	public Mono<Void> upsert(Node peer, Entry entry) {
		return Mono.create((sink) -> upsert(peer, entry, callback((ignored) -> sink.success(), sink::error)));
	}

	/**
	 * Tells the streams that {@code peer} is up (it called this node, or announced
	 * itself): a stream waiting out a backoff toward it connects on its next operation.
	 */
	public void peerIsUp(String peerId) {
		PeerStream[] byLoop = this.streams.get(peerId);
		if (byLoop != null) {
			for (PeerStream stream : byLoop) {
				if (stream != null && stream.waiting()) {
					try {
						stream.loop().execute(stream::endBackoff);
					}
					catch (RejectedExecutionException ex) {
						// The loop stops: nothing will use the stream again.
					}
				}
			}
		}
	}

	/** Operations in flight toward the peer, on all loops (a gauge's view: racy). */
	public int inFlight(Node peer) {
		PeerStream[] byLoop = this.streams.get(peer.id());
		int sum = 0;
		if (byLoop != null) {
			for (PeerStream stream : byLoop) {
				sum += (stream != null) ? stream.inFlight() : 0;
			}
		}
		return sum;
	}

	/** The most operations in flight to one peer, over all its streams. */
	public int maxInFlight() {
		return this.settings.maxInFlight() * this.loops.length;
	}

	/**
	 * Waits, at most {@code timeout}, until no operation is in flight on any stream
	 * (after {@link #close()}); never on an event loop.
	 */
	public void awaitDrained(Duration timeout) {
		long end = System.nanoTime() + timeout.toNanos();
		if (EventLoops.indexOfCurrent(this.loops) >= 0) {
			return;
		}
		while (System.nanoTime() - end < 0 && inFlightAll() > 0) {
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	private int inFlightAll() {
		int sum = 0;
		for (PeerStream[] byLoop : this.streams.values()) {
			for (PeerStream stream : byLoop) {
				sum += (stream != null) ? stream.inFlight() : 0;
			}
		}
		return sum;
	}

	private static <T> Callback<T> callback(Consumer<T> answered, Consumer<Throwable> failed) {
		return new Callback<>() {

			@Override
			public void answered(T value) {
				answered.accept(value);
			}

			@Override
			public void failed(Throwable error) {
				failed.accept(error);
			}

		};
	}

	private void submit(Node peer, StreamOperation operation, boolean probe) {
		operation.probe = probe;
		if (this.closed) {
			operation.fail(new PeerException("this node is shutting down"));
			return;
		}
		int index = EventLoops.indexOfCurrent(this.loops);
		if (index >= 0) {
			stream(peer, index).submit(operation);
			return;
		}
		int chosen = Math.floorMod(this.handOff.getAndIncrement(), this.loops.length);
		try {
			this.loops[chosen].execute(() -> stream(peer, chosen).submit(operation));
		}
		catch (RejectedExecutionException ex) {
			operation.fail(new PeerException("this node's event loops are shutting down"));
		}
	}

	private PeerStream stream(Node peer, int index) {
		PeerStream[] byLoop = this.streams.computeIfAbsent(peer.id(), (id) -> {
			this.metrics.inFlight(id, () -> inFlight(peer));
			return new PeerStream[this.loops.length];
		});
		PeerStream stream = byLoop[index];
		if (stream == null || !stream.peer().equals(peer)) {
			// Only the loop of this index writes its slot. A peer whose URL changed
			// gets a new stream; the old one finishes what it has.
			if (stream != null) {
				stream.drain();
			}
			stream = new PeerStream(peer, this.loops[index], this.client, this.breakers.apply(peer), this.links,
					this.settings, this.metrics.of(peer.id()));
			byLoop[index] = stream;
		}
		return stream;
	}

	/**
	 * Ends every stream: each finishes what it has sent (the peers answer it) within the
	 * operations' deadline; what is still unanswered then fails.
	 */
	@Override
	public void close() {
		this.closed = true;
		for (PeerStream[] byLoop : this.streams.values()) {
			for (PeerStream stream : byLoop) {
				if (stream != null) {
					try {
						stream.loop().execute(stream::drain);
					}
					catch (RejectedExecutionException ex) {
						stream.abandon();
					}
				}
			}
		}
	}

}
