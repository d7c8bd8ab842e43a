package io.quorumkv.service.peer;

import java.util.concurrent.TimeUnit;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.quorumkv.service.cluster.ClockSkewException;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.ReplicaStreams.Links;
import io.quorumkv.service.peer.StreamFrames.Result;

/**
 * What one replica stream ({@link PeerStream}) learns of its peer from each operation's
 * outcome: the peer's circuit breaker, the stream's metrics, and the outcomes the rest of
 * the node is told of. Owned by the stream's loop (the breaker is shared by the peer's
 * streams on every loop, and is thread-safe).
 */
final class PeerHealth {

	private final Node peer;

	private final CircuitBreaker breaker;

	private final Links links;

	private final StreamMetrics.Peer metrics;

	private String lastOutcome = "";

	PeerHealth(Node peer, CircuitBreaker breaker, Links links, StreamMetrics.Peer metrics) {
		this.peer = peer;
		this.breaker = breaker;
		this.links = links;
		this.metrics = metrics;
	}

	/** Whether the breaker lets {@code operation} through (a probe always goes). */
	boolean admits(StreamOperation operation) {
		return this.breaker.tryAcquirePermission() || operation.probe;
	}

	/** The failure of an operation the breaker did not let through. */
	CallNotPermittedException open() {
		return CallNotPermittedException.createCallNotPermittedException(this.breaker);
	}

	/** Gives back the permission of an admitted operation that was not sent after all. */
	void release() {
		this.breaker.releasePermission();
	}

	/** {@code operation} was answered as it asked. */
	void succeeded(StreamOperation operation) {
		this.breaker.onSuccess(System.nanoTime() - operation.startNanos, TimeUnit.NANOSECONDS);
		CircuitBreaker.State state = this.breaker.getState();
		if (state == CircuitBreaker.State.HALF_OPEN) {
			closeBreaker();
		}
		else if (state == CircuitBreaker.State.OPEN) {
			// A probe got through: the peer is back.
			this.links.reached(this.peer);
		}
		record(operation, "success");
	}

	/** {@code operation} failed with {@code error}, counted against the peer. */
	void failed(StreamOperation operation, String outcome, Throwable error) {
		this.breaker.onError(System.nanoTime() - operation.startNanos, TimeUnit.NANOSECONDS, error);
		record(operation, outcome);
	}

	/** {@code operation} was refused before it was sent (not counted by the breaker). */
	void refused(StreamOperation operation, String outcome) {
		record(operation, outcome);
	}

	/**
	 * The failure a result that does not answer {@code operation} as asked means; a peer
	 * on a newer ring is told to the node.
	 */
	Throwable failure(StreamOperation operation, Result result) {
		return switch (result.type()) {
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

	private void record(StreamOperation operation, String outcome) {
		this.metrics.record(operation.name(), outcome, operation.startNanos);
		if (!outcome.equals(this.lastOutcome) && !(operation instanceof StreamOperation.Ping)) {
			this.lastOutcome = outcome;
			this.links.outcome(this.peer, outcome);
		}
	}

}
