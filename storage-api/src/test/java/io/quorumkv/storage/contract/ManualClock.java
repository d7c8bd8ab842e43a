package io.quorumkv.storage.contract;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

import io.quorumkv.storage.Expiry;

/**
 * A clock that moves only when a test moves it: the backends' injected clock in expiry
 * tests, which never sleep.
 *
 * <pre>{@code
 * ManualClock clock = ManualClock.startingAt(Instant.parse("2030-01-01T00:00:00Z"));
 * Storage storage = open(dir, clock);
 * clock.advance(Duration.ofSeconds(61));
 * }</pre>
 */
public final class ManualClock extends Clock {

	private final AtomicReference<Instant> now;

	private ManualClock(AtomicReference<Instant> now) {
		this.now = now;
	}

	public static ManualClock startingAt(Instant start) {
		return new ManualClock(new AtomicReference<>(start));
	}

	/** Moves the clock by {@code step} (backwards when negative). */
	public void advance(Duration step) {
		this.now.updateAndGet((instant) -> instant.plus(step));
	}

	public void set(Instant instant) {
		this.now.set(instant);
	}

	/** The current instant in microseconds ({@link Expiry#nowMicros}). */
	public long micros() {
		return Expiry.nowMicros(this);
	}

	@Override
	public Instant instant() {
		return this.now.get();
	}

	@Override
	public ZoneId getZone() {
		return ZoneOffset.UTC;
	}

	@Override
	public Clock withZone(ZoneId zone) {
		if (!zone.equals(ZoneOffset.UTC)) {
			throw new UnsupportedOperationException("a manual clock runs in UTC");
		}
		return this;
	}

}
