package io.quorumkv.service.repair;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Repair's rate limit: at most {@code entriesPerSecond} entries a second over every scan
 * and stream of repair on this node together (tree builds, digest scans, both for this
 * node's repairs and for its peers'), so that repair leaves the disk and the CPU to the
 * clients. A flux is paced in batches: each batch waits until the rate allows it, on a
 * timer, never blocking a thread. Zero means no limit.
 */
final class Pacer {

	private static final int BATCH = 256;

	private final long nanosPerEntry;

	private final Scheduler timer;

	/** When the next batch may go, on {@link System#nanoTime()}'s scale. */
	private final AtomicLong next = new AtomicLong(System.nanoTime());

	Pacer(long entriesPerSecond, Scheduler timer) {
		if (entriesPerSecond < 0) {
			throw new IllegalArgumentException("entries per second must not be negative");
		}
		this.nanosPerEntry = (entriesPerSecond == 0) ? 0 : Math.max(1, 1_000_000_000L / entriesPerSecond);
		this.timer = timer;
	}

	<T> Flux<T> paced(Flux<T> source) {
		if (this.nanosPerEntry == 0) {
			return source;
		}
		return source.buffer(BATCH).concatMap((batch) -> {
			long wait = reserve(batch.size());
			Flux<T> out = Flux.fromIterable(batch);
			return (wait <= 0) ? out : Mono.delay(Duration.ofNanos(wait), this.timer).thenMany(out);
		}, 1);
	}

	/** Reserves a slot for {@code entries}; how long to wait for it. */
	private long reserve(int entries) {
		long cost = entries * this.nanosPerEntry;
		while (true) {
			long now = System.nanoTime();
			long previous = this.next.get();
			// An idle pacer does not save up a burst longer than one batch.
			long start = Math.max(previous, now - cost);
			if (this.next.compareAndSet(previous, start + cost)) {
				return start - now;
			}
		}
	}

}
