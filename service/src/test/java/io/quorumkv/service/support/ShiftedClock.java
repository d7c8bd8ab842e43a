package io.quorumkv.service.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A wall clock for a test node: the system clock plus a shift the test sets and moves (an
 * hour ahead, ten days later), so that time-based rules are tested without sleeping. A
 * node takes it as its {@link Clock} bean ({@link TestCluster#withClock}).
 */
public final class ShiftedClock extends Clock {

	private final AtomicLong shiftNanos;

	public ShiftedClock(Duration shift) {
		this.shiftNanos = new AtomicLong(shift.toNanos());
	}

	/** Moves the clock forward (or back, for a negative amount). */
	public void advance(Duration amount) {
		this.shiftNanos.addAndGet(amount.toNanos());
	}

	public Duration shift() {
		return Duration.ofNanos(this.shiftNanos.get());
	}

	@Override
	public ZoneId getZone() {
		return ZoneOffset.UTC;
	}

	@Override
	public Clock withZone(ZoneId zone) {
		return this;
	}

	@Override
	public Instant instant() {
		return Instant.now().plusNanos(this.shiftNanos.get());
	}

}
