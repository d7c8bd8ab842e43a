package io.quorumkv.service.cluster;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Where timestamps from other nodes enter this node's clock: a replica write, a batch, a
 * read answer, a repair stream. A timestamp further ahead of the local wall clock than
 * {@code quorumkv.cluster.max-clock-skew} is refused and never adopted; each refusal is
 * counted ({@code quorumkv.clock.refused}, by source) and logged naming the peer (at most
 * one line per peer every ten seconds, with the number refused since).
 */
public final class ClockGuard {

	private static final Log logger = LogFactory.getLog(ClockGuard.class);

	private static final long LOG_EVERY_NANOS = Duration.ofSeconds(10).toNanos();

	/** Where a timestamp came from. */
	public enum Source {

		/** A single replica write: an unbatched write, a hint, a read repair. */
		WRITE,
		/** An upsert of a batch of replica operations. */
		BATCH,
		/** A replica's answer to a read. */
		READ,
		/** An entry pulled from a replica by anti-entropy repair. */
		REPAIR;

		String tag() {
			return name().toLowerCase(Locale.ROOT);
		}

	}

	private final HybridLogicalClock clock;

	private final Map<Source, Counter> refused = new ConcurrentHashMap<>();

	private final Map<String, LogState> logged = new ConcurrentHashMap<>();

	public ClockGuard(HybridLogicalClock clock, MeterRegistry meters) {
		this.clock = clock;
		for (Source source : Source.values()) {
			this.refused.put(source, Counter.builder("quorumkv.clock.refused")
				.description("Timestamps from other nodes refused: further ahead of the local clock than the max skew")
				.tag("source", source.tag())
				.register(meters));
		}
	}

	/**
	 * Adopts {@code timestamp}, or refuses it.
	 * @throws ClockSkewException when it is too far ahead of the local wall clock
	 */
	public void accept(long timestamp, Source source, String peer) {
		if (!admit(timestamp, source, peer)) {
			throw refusal(timestamp);
		}
	}

	/** The failure that says why {@code timestamp} was refused. */
	public ClockSkewException refusal(long timestamp) {
		long ahead = timestamp - this.clock.wallMicros();
		return new ClockSkewException("timestamp " + timestamp + " is " + ahead / 1_000
				+ " ms ahead of this node's clock (quorumkv.cluster.max-clock-skew " + this.clock.maxSkew().toMillis()
				+ " ms); refused", ahead);
	}

	/** Adopts {@code timestamp} and answers true, or counts, logs and answers false. */
	public boolean admit(long timestamp, Source source, String peer) {
		if (this.clock.observe(timestamp)) {
			return true;
		}
		this.refused.get(source).increment();
		log(timestamp, source, peer);
		return false;
	}

	/** Whether {@code timestamp} would be admitted; nothing is adopted or counted. */
	public boolean admissible(long timestamp) {
		return this.clock.admissible(timestamp);
	}

	public HybridLogicalClock clock() {
		return this.clock;
	}

	private void log(long timestamp, Source source, String peer) {
		LogState state = this.logged.computeIfAbsent(peer, (p) -> new LogState());
		long suppressed = state.suppressed.incrementAndGet();
		long now = System.nanoTime();
		long last = state.lastLog.get();
		if (last != 0 && now - last < LOG_EVERY_NANOS) {
			return;
		}
		if (!state.lastLog.compareAndSet(last, now)) {
			return;
		}
		state.suppressed.addAndGet(-suppressed);
		long aheadMs = (timestamp - this.clock.wallMicros()) / 1_000;
		logger.warn("Refused a timestamp " + aheadMs + " ms ahead of this node's clock in a " + source.tag() + " from "
				+ peer + " (quorumkv.cluster.max-clock-skew " + this.clock.maxSkew().toMillis() + " ms); not adopted"
				+ ((suppressed > 1) ? "; " + suppressed + " refused from it since the last line"
						: "; check that peer's clock"));
	}

	private static final class LogState {

		final AtomicLong lastLog = new AtomicLong();

		final AtomicLong suppressed = new AtomicLong();

	}

}
