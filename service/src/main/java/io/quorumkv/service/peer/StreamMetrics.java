package io.quorumkv.service.peer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The streams' meters: {@code quorumkv.replica.requests} (a timer per peer, operation and
 * outcome, as every call to a peer has), {@code quorumkv.replica.stream.chunks} (chunks
 * sent: operations per chunk is requests over chunks) and
 * {@code quorumkv.replica.stream.connects} (streams opened, by outcome) and
 * {@code quorumkv.replica.stream.in.flight} (operations in flight, by peer).
 */
final class StreamMetrics {

	private final MeterRegistry meters;

	private final Map<String, Peer> peers = new ConcurrentHashMap<>();

	StreamMetrics(MeterRegistry meters) {
		this.meters = meters;
	}

	/** {@code quorumkv.replica.stream.in.flight}: the peer's operations in flight. */
	void inFlight(String peer, java.util.function.Supplier<Number> operations) {
		Gauge.builder("quorumkv.replica.stream.in.flight", operations)
			.description("Replica operations in flight to a peer, on all its streams")
			.tag("peer", peer)
			.register(this.meters);
	}

	Peer of(String peer) {
		return this.peers.computeIfAbsent(peer, Peer::new);
	}

	/** One peer's meters; the successes of gets and upserts looked up once. */
	final class Peer {

		private final String peer;

		private final Map<String, Timer> timers = new ConcurrentHashMap<>();

		private final Timer getOk;

		private final Timer upsertOk;

		final Counter chunks;

		final Counter opened;

		final Counter failedToOpen;

		Peer(String peer) {
			this.peer = peer;
			this.getOk = timer("get", "success");
			this.upsertOk = timer("upsert", "success");
			this.chunks = Counter.builder("quorumkv.replica.stream.chunks")
				.description("Chunks of operations sent on replica streams")
				.tag("peer", peer)
				.register(StreamMetrics.this.meters);
			this.opened = connects("opened");
			this.failedToOpen = connects("failed");
		}

		void record(String operation, String outcome, long startNanos) {
			Timer timer;
			if ("success".equals(outcome)) {
				timer = switch (operation) {
					case "get" -> this.getOk;
					case "upsert" -> this.upsertOk;
					default -> timer(operation, outcome);
				};
			}
			else {
				timer = timer(operation, outcome);
			}
			timer.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
		}

		private Timer timer(String operation, String outcome) {
			return this.timers.computeIfAbsent(operation + ' ' + outcome,
					(k) -> Timer.builder("quorumkv.replica.requests")
						.description("Calls to peers' internal API by peer, operation and outcome")
						.tag("peer", this.peer)
						.tag("op", operation)
						.tag("outcome", outcome)
						.publishPercentileHistogram()
						.register(StreamMetrics.this.meters));
		}

		private Counter connects(String outcome) {
			return Counter.builder("quorumkv.replica.stream.connects")
				.description("Replica streams opened, by outcome")
				.tag("peer", this.peer)
				.tag("outcome", outcome)
				.register(StreamMetrics.this.meters);
		}

	}

}
