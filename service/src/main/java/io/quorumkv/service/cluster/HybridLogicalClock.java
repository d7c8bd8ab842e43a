package io.quorumkv.service.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * The coordinator's timestamp source (DESIGN §3): wall-clock microseconds that never go
 * backwards, not even across a restart, and are bumped past newer timestamps this node
 * sees, but never dragged further ahead of the wall clock than the allowed skew.
 *
 * <ul>
 * <li>{@link #now()}: a new stamp, greater than every stamp issued or adopted before,
 * also by an earlier run of the node when the clock is durable ({@link #durable}: its
 * high-water mark is kept in the data folder, {@link HighWaterMark}).</li>
 * <li>{@link #observe(long)}: adopts a timestamp seen from elsewhere, unless it is more
 * than {@code maxSkew} ahead of the local wall clock; such a timestamp is refused and the
 * clock is left alone ({@link ClockGuard} counts and logs refusals).</li>
 * </ul>
 *
 * <pre>{@code
 * HybridLogicalClock clock = HybridLogicalClock.durable(Clock.systemUTC(), Duration.ofMillis(500),
 *         dataFolder.resolve("clock"), Duration.ofSeconds(1));
 * Entry entry = Entry.value(key, value, clock.now());
 * }</pre>
 */
public final class HybridLogicalClock implements AutoCloseable {

	private final AtomicLong last;

	private final LongSupplier wallMicros;

	private final long maxSkewMicros;

	private final @Nullable HighWaterMark mark;

	HybridLogicalClock(LongSupplier wallMicros, Duration maxSkew, @Nullable HighWaterMark mark) {
		Objects.requireNonNull(maxSkew, "maxSkew");
		if (maxSkew.isNegative()) {
			throw new IllegalArgumentException("maxSkew must not be negative");
		}
		this.wallMicros = wallMicros;
		this.maxSkewMicros = maxSkew.toNanos() / 1_000;
		this.mark = mark;
		this.last = new AtomicLong((mark != null) ? mark.recovered() : Long.MIN_VALUE);
	}

	/**
	 * A clock whose stamps never go below those of the node's earlier runs: its mark is
	 * kept in {@code markFile}, reserved ahead by {@code step}.
	 * @throws IOException when the mark cannot be read (a damaged file is reported as
	 * {@link io.quorumkv.storage.CorruptedStorageException}, never ignored)
	 */
	public static HybridLogicalClock durable(Clock wall, Duration maxSkew, Path markFile, Duration step)
			throws IOException {
		HighWaterMark mark = HighWaterMark.open(markFile, step);
		HybridLogicalClock clock = new HybridLogicalClock(micros(wall), maxSkew, mark);
		// Covers the first stamps before they are handed out, off any event loop.
		mark.reserve(Math.max(clock.last.get(), clock.wallMicros()));
		return clock;
	}

	/** A clock without a durable mark (single-process tools and tests). */
	public static HybridLogicalClock inMemory(Clock wall, Duration maxSkew) {
		return new HybridLogicalClock(micros(wall), maxSkew, null);
	}

	static LongSupplier micros(Clock clock) {
		Objects.requireNonNull(clock, "clock");
		return () -> {
			Instant now = clock.instant();
			return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
		};
	}

	/** A new timestamp, greater than every one issued or adopted before. */
	public long now() {
		long wall = this.wallMicros.getAsLong();
		long stamp = this.last.updateAndGet((previous) -> Math.max(previous + 1, wall));
		if (this.mark != null) {
			this.mark.cover(stamp);
		}
		return stamp;
	}

	/**
	 * The clock's time now, without issuing a timestamp: the wall clock, or the last
	 * timestamp issued or observed when that is ahead. Expiries are judged by it, on the
	 * scale they were stamped on.
	 */
	public long current() {
		return Math.max(this.wallMicros.getAsLong(), this.last.get());
	}

	/**
	 * Moves the clock past a timestamp seen from elsewhere (a replica's write or answer),
	 * unless it is too far ahead of the wall clock.
	 * @return false when the timestamp was refused (and not adopted)
	 */
	public boolean observe(long timestamp) {
		if (!admissible(timestamp)) {
			return false;
		}
		this.last.accumulateAndGet(timestamp, Math::max);
		return true;
	}

	/** Whether {@code timestamp} is at most the allowed skew ahead of the wall clock. */
	public boolean admissible(long timestamp) {
		return timestamp <= this.wallMicros.getAsLong() + this.maxSkewMicros;
	}

	/** The local wall clock, in microseconds since the epoch. */
	public long wallMicros() {
		return this.wallMicros.getAsLong();
	}

	/** The last stamp issued or adopted. */
	public long last() {
		return this.last.get();
	}

	public Duration maxSkew() {
		return Duration.ofNanos(this.maxSkewMicros * 1_000);
	}

	/** Times the durable mark was written (0 for an in-memory clock). */
	long markWrites() {
		return (this.mark != null) ? this.mark.writes() : 0;
	}

	/**
	 * Writes the exact last stamp as the mark, so that a restart resumes right above it.
	 */
	@Override
	public void close() {
		if (this.mark != null) {
			this.mark.close(this.last.get());
		}
	}

}
