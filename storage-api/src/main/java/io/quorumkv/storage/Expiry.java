package io.quorumkv.storage;

import java.time.Instant;
import java.time.InstantSource;

/**
 * Expiry times of entries (a write's time to live): absolute instants in microseconds
 * since the epoch, on the scale of the coordinator's hybrid-logical-clock timestamps, so
 * that every replica judges one write's expiry by the same instant.
 *
 * <pre>{@code
 * long stamp = clock.now();
 * Entry put = Entry.expiring(key, value, stamp, Expiry.after(stamp, 3600));
 * Entry seen = stored.asSeenAt(Expiry.nowMicros(backendClock));
 * }</pre>
 */
public final class Expiry {

	/** The expiry of an entry that never expires (and of every tombstone). */
	public static final long NEVER = Long.MAX_VALUE;

	private Expiry() {
	}

	/** The instant of {@code clock} in microseconds since the epoch. */
	public static long nowMicros(InstantSource clock) {
		Instant now = clock.instant();
		return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
	}

	/**
	 * {@code seconds} after {@code micros}, saturated below {@link #NEVER}: an expiry
	 * that overflows is the latest finite instant, never "never".
	 */
	public static long after(long micros, long seconds) {
		if (seconds < 0) {
			throw new IllegalArgumentException("seconds must not be negative: " + seconds);
		}
		long delta = (seconds > (NEVER - 1) / 1_000_000L) ? NEVER - 1 : seconds * 1_000_000L;
		long at = micros + delta;
		return (at < micros || at == NEVER) ? NEVER - 1 : at;
	}

}
