package io.quorumkv.service.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;

import io.quorumkv.storage.Expiry;

/**
 * Readings of the wall clock in microseconds, each later than the one before (a test's
 * writes then have distinct, ordered timestamps that a store's own clock also reads).
 */
public final class RisingClock {

	private long last;

	/** A reading later than the last one given. */
	public long next() {
		long now = Expiry.nowMicros(Clock.systemUTC());
		for (int i = 0; i < 1_000_000 && now <= this.last; i++) {
			Thread.onSpinWait();
			now = Expiry.nowMicros(Clock.systemUTC());
		}
		assertThat(now).isGreaterThan(this.last);
		this.last = now;
		return now;
	}

	/** The last reading given (0 before the first). */
	public long last() {
		return this.last;
	}

}
