package io.quorumkv.service.cluster;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Each peer's clock offset, measured from round trips of internal calls: every internal
 * answer carries the peer's wall clock ({@code X-QuorumKV-Clock}), and a call sent at
 * {@code t0} and answered at {@code t1} (local wall clock) gives
 * {@code offset = peerClock - (t0 + t1) / 2}, within {@code ±(t1 - t0) / 2}. The estimate
 * is the sample with the shortest round trip of the last one or two windows (NTP's
 * choice: a short round trip bounds the error best). Peers are named by their base URL
 * (the address the call went to; a node's id is not on the wire of every answer).
 * Exported as {@code quorumkv.clock.offset} and {@code quorumkv.clock.offset.error}
 * (seconds, per peer).
 */
public final class PeerClocks {

	/**
	 * One estimate.
	 *
	 * @param offsetMicros the peer's clock minus this node's
	 * @param errorMicros half the round trip: the offset is within this of the truth
	 * @param atNanos when it was sampled ({@link System#nanoTime()})
	 */
	public record Offset(long offsetMicros, long errorMicros, long atNanos) {
	}

	private final long windowNanos;

	private final MeterRegistry meters;

	private final Map<String, Estimator> peers = new ConcurrentHashMap<>();

	/**
	 * @param peers the peers known at start, exported from the start; a peer that joins
	 * later is exported from its first sample
	 */
	public PeerClocks(List<Node> peers, Duration window, MeterRegistry meters) {
		this.windowNanos = window.toNanos();
		this.meters = meters;
		for (Node peer : peers) {
			estimator(peer.base());
		}
	}

	private Estimator estimator(String peer) {
		return this.peers.computeIfAbsent(peer, (url) -> {
			Estimator estimator = new Estimator();
			Gauge.builder("quorumkv.clock.offset", estimator, (e) -> seconds(e.offset(), false))
				.description("The peer's clock minus this node's, from round trips of internal calls")
				.tag("peer", url)
				.baseUnit("seconds")
				.register(this.meters);
			Gauge.builder("quorumkv.clock.offset.error", estimator, (e) -> seconds(e.offset(), true))
				.description("Bound of the offset's error: half the round trip it was measured on")
				.tag("peer", url)
				.baseUnit("seconds")
				.register(this.meters);
			return estimator;
		});
	}

	/**
	 * Records one round trip to {@code peer} (its base URL, {@link Node#base()}); all
	 * times in microseconds.
	 */
	public void sample(String peer, long sentMicros, long receivedMicros, long peerMicros) {
		if (receivedMicros < sentMicros) {
			return;
		}
		long offset = peerMicros - (sentMicros + (receivedMicros - sentMicros) / 2);
		estimator(peer).add(new Offset(offset, (receivedMicros - sentMicros) / 2, System.nanoTime()), this.windowNanos);
	}

	/** The current estimate for {@code peer} (its base URL), if one was measured. */
	public Optional<Offset> offset(String peer) {
		Estimator estimator = this.peers.get(peer);
		return Optional.ofNullable((estimator != null) ? estimator.offset() : null);
	}

	/** Every peer's estimate (absent peers never answered), by base URL. */
	public Map<String, Optional<Offset>> offsets() {
		Map<String, Optional<Offset>> all = new LinkedHashMap<>();
		this.peers.forEach((peer, estimator) -> all.put(peer, Optional.ofNullable(estimator.offset())));
		return all;
	}

	private static double seconds(@Nullable Offset offset, boolean error) {
		if (offset == null) {
			return Double.NaN;
		}
		return ((error) ? offset.errorMicros() : offset.offsetMicros()) / 1e6;
	}

	/** The shortest round trip of the current window and of the one before. */
	private static final class Estimator {

		private @Nullable Offset current;

		private @Nullable Offset previous;

		private long windowStart = System.nanoTime();

		synchronized void add(Offset sample, long windowNanos) {
			if (sample.atNanos() - this.windowStart > windowNanos) {
				this.previous = this.current;
				this.current = null;
				this.windowStart = sample.atNanos();
			}
			if (this.current == null || sample.errorMicros() <= this.current.errorMicros()) {
				this.current = sample;
			}
		}

		synchronized @Nullable Offset offset() {
			if (this.previous == null) {
				return this.current;
			}
			if (this.current == null) {
				return this.previous;
			}
			return (this.current.errorMicros() <= this.previous.errorMicros()) ? this.current : this.previous;
		}

	}

}
