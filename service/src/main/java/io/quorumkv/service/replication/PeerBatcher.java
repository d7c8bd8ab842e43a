package io.quorumkv.service.replication;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.util.concurrent.EventExecutor;
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.EventLoops;
import io.quorumkv.service.peer.PeerException;
import io.quorumkv.service.replication.BatchCodec.Operation;
import io.quorumkv.service.replication.BatchCodec.Result;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Coalesces the replica operations the coordinator sends one peer into batch calls
 * ({@link BatchCodec}). At most {@code maxInFlight} calls to the peer run at once; an
 * operation that arrives while they all run waits in a bounded queue, and the next call
 * takes everything queued (up to {@code maxOps} operations and {@code maxBytes} bytes).
 * Under light load each operation goes at once, alone; under heavy load one call carries
 * many, which spares most of the per-request cost of HTTP on both nodes. On an event
 * loop, a call that could go at once waits for the end of the loop's turn instead, and
 * carries every operation of the requests read in that turn: otherwise the first one
 * would go alone and the others wait for its answer (with {@code turns}).
 *
 * <p>
 * Every operation is answered exactly once: with its result, with the call's failure,
 * with {@link BatchQueueFullException} when the queue is full, or with a
 * {@link TimeoutException} when it waited longer than the replica timeout before a call
 * could take it.
 */
final class PeerBatcher {

	private static final Logger logger = LoggerFactory.getLogger(PeerBatcher.class);

	private static final int SUBSCRIBING = 0;

	private static final int DONE_WHILE_SUBSCRIBING = 1;

	private static final int RUNNING = 2;

	private final String peer;

	private final Function<byte[], Mono<byte[]>> calls;

	private final Function<byte[], Mono<Optional<Entry>>> singleGets;

	private final int maxInFlight;

	private final int maxOps;

	private final int maxBytes;

	private final int maxQueued;

	private final int maxKeySize;

	private final long maxWaitNanos;

	private final ArrayDeque<Pending> queue = new ArrayDeque<>();

	private int inFlight;

	/** A call is reserved and waits for the end of a loop's turn (guarded by this). */
	private boolean turnPending;

	/** The node's event loops; null when calls never wait for the end of a turn. */
	private final @Nullable EventLoopTimers turns;

	private final DistributionSummary batchSizes;

	private final Counter rejected;

	/**
	 * @param calls sends one batch body to the peer and emits its answer body
	 * @param singleGets reads one key from the peer in a call of its own (for the gets a
	 * full answer sent back)
	 */
	PeerBatcher(String peer, Function<byte[], Mono<byte[]>> calls, Function<byte[], Mono<Optional<Entry>>> singleGets,
			Limits limits, MeterRegistry meters) {
		this(peer, calls, singleGets, limits, null, meters);
	}

	/**
	 * @param turns the node's event loops: a call started on one of them waits for the
	 * end of its turn (null: calls go at once)
	 */
	PeerBatcher(String peer, Function<byte[], Mono<byte[]>> calls, Function<byte[], Mono<Optional<Entry>>> singleGets,
			Limits limits, @Nullable EventLoopTimers turns, MeterRegistry meters) {
		this.turns = turns;
		this.peer = peer;
		this.calls = calls;
		this.singleGets = singleGets;
		this.maxInFlight = limits.maxInFlight();
		this.maxOps = limits.maxOps();
		this.maxBytes = limits.maxBytes();
		this.maxQueued = limits.maxQueued();
		this.maxKeySize = limits.maxKeySize();
		this.maxWaitNanos = limits.maxWait().toNanos();
		this.batchSizes = DistributionSummary.builder("quorumkv.replica.batch.size")
			.description("Operations per batch call to a peer")
			.tag("peer", peer)
			.register(meters);
		this.rejected = Counter.builder("quorumkv.replica.batch.rejected")
			.description("Replica operations refused because the peer's batch queue was full")
			.tag("peer", peer)
			.register(meters);
		Gauge.builder("quorumkv.replica.batch.queued", this, PeerBatcher::queued)
			.description("Replica operations waiting for a batch call to a peer")
			.tag("peer", peer)
			.register(meters);
	}

	/** The peer's entry of {@code key}; empty when it never saw the key. */
	Mono<Optional<Entry>> get(byte[] key) {
		return Mono.<Result>create((sink) -> submit(new Pending(Operation.get(key), sink)))
			.flatMap((result) -> (result.type() == BatchCodec.RETRY_ALONE) ? this.singleGets.apply(key)
					: Mono.just(Optional.ofNullable(result.entry())));
	}

	/** Sends {@code entry} to the peer, which keeps the greater of it and its own. */
	Mono<Void> upsert(Entry entry) {
		return Mono.<Result>create((sink) -> submit(new Pending(Operation.upsert(entry), sink))).then();
	}

	synchronized int queued() {
		return this.queue.size();
	}

	private void submit(Pending pending) {
		List<Pending> batch = null;
		EventExecutor loop = null;
		boolean full;
		synchronized (this) {
			full = this.queue.size() >= this.maxQueued;
			if (!full) {
				this.queue.add(pending);
				if (this.inFlight < this.maxInFlight && !this.turnPending) {
					this.inFlight++;
					loop = (this.turns != null) ? this.turns.currentLoop() : null;
					if (loop != null) {
						this.turnPending = true;
					}
					else {
						batch = take();
					}
				}
			}
		}
		if (full) {
			this.rejected.increment();
			pending.sink.error(new BatchQueueFullException(this.peer, this.maxQueued));
			return;
		}
		if (loop != null) {
			EventLoops.afterTurn(loop, this::sendAfterTurn);
			return;
		}
		run(batch);
	}

	/** The reserved call, with everything queued by the end of the turn. */
	private void sendAfterTurn() {
		List<Pending> batch;
		synchronized (this) {
			this.turnPending = false;
			batch = take();
		}
		run(batch);
	}

	/**
	 * Sends {@code batch}, then the batches queued meanwhile for as long as calls end
	 * before they are even under way (a peer whose breaker is open), so that this never
	 * recurses; a call that is under way goes on in {@link #afterCall}.
	 */
	private void run(@Nullable List<Pending> batch) {
		while (batch != null) {
			if (!send(batch)) {
				return;
			}
			batch = nextOrIdle();
		}
	}

	private void afterCall() {
		run(nextOrIdle());
	}

	private synchronized @Nullable List<Pending> nextOrIdle() {
		if (this.queue.isEmpty()) {
			this.inFlight--;
			return null;
		}
		return take();
	}

	/** Under the lock: the next batch off the queue. */
	private List<Pending> take() {
		List<Pending> batch = new ArrayList<>(Math.min(this.queue.size(), this.maxOps));
		int bytes = 0;
		while (!this.queue.isEmpty() && batch.size() < this.maxOps) {
			int size = this.queue.peek().operation.encodedSize();
			if (!batch.isEmpty() && bytes + size > this.maxBytes) {
				break;
			}
			bytes += size;
			batch.add(this.queue.poll());
		}
		return batch;
	}

	/** Starts the call of one batch; true when it already ended. */
	private boolean send(List<Pending> batch) {
		long now = System.nanoTime();
		List<Pending> live = new ArrayList<>(batch.size());
		for (Pending pending : batch) {
			if (now - pending.queuedAt > this.maxWaitNanos) {
				pending.sink.error(new TimeoutException(
						"waited over " + (this.maxWaitNanos / 1_000_000) + " ms for a batch call to " + this.peer));
			}
			else {
				live.add(pending);
			}
		}
		if (live.isEmpty()) {
			return true;
		}
		List<Operation> operations = new ArrayList<>(live.size());
		for (Pending pending : live) {
			operations.add(pending.operation);
		}
		this.batchSizes.record(operations.size());
		AtomicInteger state = new AtomicInteger(SUBSCRIBING);
		Runnable ended = () -> {
			if (!state.compareAndSet(SUBSCRIBING, DONE_WHILE_SUBSCRIBING)) {
				afterCall();
			}
		};
		Mono.defer(() -> this.calls.apply(BatchCodec.encodeRequest(operations)))
			.switchIfEmpty(Mono.error(() -> new PeerException("empty answer to a batch from " + this.peer)))
			.subscribe((answer) -> {
				try {
					deliver(live, BatchCodec.decodeResponse(answer, operations, this.maxKeySize));
				}
				catch (RuntimeException ex) {
					failAll(live, ex);
				}
				finally {
					ended.run();
				}
			}, (error) -> {
				try {
					failAll(live, error);
				}
				finally {
					ended.run();
				}
			});
		return !state.compareAndSet(SUBSCRIBING, RUNNING);
	}

	private void deliver(List<Pending> batch, List<Result> results) {
		for (int i = 0; i < batch.size(); i++) {
			Result result = results.get(i);
			MonoSink<Result> sink = batch.get(i).sink;
			signal(() -> {
				if (result.isFailure()) {
					sink.error(new PeerException(this.peer + " failed a batched operation: " + result.failure()));
				}
				else {
					sink.success(result);
				}
			});
		}
	}

	private void failAll(List<Pending> batch, Throwable error) {
		for (Pending pending : batch) {
			signal(() -> pending.sink.error(error));
		}
	}

	/** One operation's answer; what its subscriber throws must not stop the others'. */
	private static void signal(Runnable signal) {
		try {
			signal.run();
		}
		catch (RuntimeException ex) {
			logger.error("A replica operation's subscriber failed on its answer", ex);
		}
	}

	/**
	 * @param maxInFlight batch calls to the peer at once
	 * @param maxOps operations per call
	 * @param maxBytes request body bytes per call (an operation bigger than this goes
	 * alone)
	 * @param maxQueued operations waiting; more are refused at once
	 * @param maxKeySize the longest key an answer may hold
	 * @param maxWait how long an operation may wait in the queue
	 */
	record Limits(int maxInFlight, int maxOps, int maxBytes, int maxQueued, int maxKeySize, Duration maxWait) {
	}

	private static final class Pending {

		final Operation operation;

		final MonoSink<Result> sink;

		final long queuedAt = System.nanoTime();

		Pending(Operation operation, MonoSink<Result> sink) {
			this.operation = operation;
			this.sink = sink;
		}

	}

	/** The peer's batch queue was full: the operation was not sent. */
	static final class BatchQueueFullException extends PeerException {

		BatchQueueFullException(String peer, int maxQueued) {
			super(maxQueued + " replica operations already wait for " + peer);
		}

	}

}
