package io.quorumkv.service.security;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A line of a kind at most once per interval, so that a flood (a scan of the internal
 * API, a client that keeps failing its TLS handshake) costs a line every interval, not
 * one per attempt: the first line is written at once, the next once the interval has
 * passed, saying how many were left out meanwhile. The message is only built when it is
 * written.
 */
final class RateLimitedLog {

	/** How often a line of one kind is written at most. */
	static final Duration INTERVAL = Duration.ofSeconds(10);

	private final Consumer<String> sink;

	private final long intervalNanos;

	private final LongSupplier nanoTime;

	/** When the next line may be written ({@link #nanoTime}). */
	private final AtomicLong next;

	private final AtomicLong omitted = new AtomicLong();

	RateLimitedLog(Consumer<String> sink) {
		this(sink, INTERVAL, System::nanoTime);
	}

	RateLimitedLog(Consumer<String> sink, Duration interval, LongSupplier nanoTime) {
		this.sink = sink;
		this.intervalNanos = interval.toNanos();
		this.nanoTime = nanoTime;
		this.next = new AtomicLong(nanoTime.getAsLong());
	}

	/** Writes the line, or counts it as left out. */
	void log(Supplier<String> message) {
		long now = this.nanoTime.getAsLong();
		long at = this.next.get();
		if (now - at >= 0 && this.next.compareAndSet(at, now + this.intervalNanos)) {
			long left = this.omitted.getAndSet(0);
			this.sink.accept(message.get()
					+ ((left > 0) ? " (and " + left + " more like it left out of the log since the last line)" : ""));
		}
		else {
			this.omitted.incrementAndGet();
		}
	}

}
