package io.quorumkv.service.cluster;

import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The coordinator's timestamp source (DESIGN §3): wall-clock microseconds that never go
 * backwards and are bumped past any newer timestamp this node sees. Two stamps taken on
 * one node are always different and ordered.
 */
public final class HybridLogicalClock {

	private final AtomicLong last = new AtomicLong(Long.MIN_VALUE);

	private final LongSupplier wallMicros;

	public HybridLogicalClock() {
		this(Clock.systemUTC());
	}

	public HybridLogicalClock(Clock clock) {
		this(() -> {
			Instant now = clock.instant();
			return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
		});
	}

	HybridLogicalClock(LongSupplier wallMicros) {
		this.wallMicros = wallMicros;
	}

	/** A new timestamp, greater than every one issued or observed before. */
	public long now() {
		long wall = this.wallMicros.getAsLong();
		return this.last.updateAndGet((previous) -> Math.max(previous + 1, wall));
	}

	/**
	 * The clock's time now, without issuing a timestamp: the wall clock, or the last
	 * timestamp issued or observed when that is ahead. Expiries are judged by it, on the
	 * scale they were stamped on.
	 */
	public long current() {
		return Math.max(this.wallMicros.getAsLong(), this.last.get());
	}

	/** Moves the clock past a timestamp seen from elsewhere (a replica's answer). */
	public void observe(long timestamp) {
		this.last.accumulateAndGet(timestamp, Math::max);
	}

}
