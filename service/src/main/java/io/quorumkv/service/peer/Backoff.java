package io.quorumkv.service.peer;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How long a replica stream ({@link PeerStream}) that failed to open waits before it
 * tries again: 50 ms, doubling with each failed open up to the longest, ended by an open
 * or by news that the peer is up. Owned by the stream's loop; {@link #waiting()} may be
 * read off it.
 */
final class Backoff {

	private static final long FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private final long maxNanos;

	private long until;

	/** Waiting out a backoff: read off the loop, to skip waking it for nothing. */
	private volatile boolean waiting;

	private int failedOpens;

	private String lastFailure = "";

	Backoff(Duration max) {
		this.maxNanos = max.toNanos();
	}

	boolean waiting() {
		return this.waiting;
	}

	/** Whether a new stream must not be opened yet, at {@code now}. */
	boolean holds(long now) {
		return now - this.until < 0;
	}

	/** Why the stream is refused while {@link #holds(long) held}, at {@code now}. */
	String reason(long now) {
		return this.lastFailure + "; the next try in " + TimeUnit.NANOSECONDS.toMillis(this.until - now) + " ms";
	}

	/** A stream ended with {@code error}; {@code failedToOpen} when it never opened. */
	void ended(Throwable error, boolean failedToOpen) {
		this.lastFailure = String.valueOf(error.getMessage());
		if (failedToOpen) {
			this.failedOpens++;
			this.until = System.nanoTime() + Math.min(this.maxNanos, FIRST_NANOS << Math.min(this.failedOpens - 1, 20));
			this.waiting = true;
		}
	}

	/** A stream opened, or the peer is known to be up: the next open goes at once. */
	void reset() {
		this.waiting = false;
		this.until = 0;
		this.failedOpens = 0;
	}

}
