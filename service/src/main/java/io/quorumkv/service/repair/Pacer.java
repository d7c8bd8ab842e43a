package io.quorumkv.service.repair;

import io.quorumkv.storage.Throttle;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * Repair's rate limit: at most {@code entriesPerSecond} entries a second over every scan
 * and stream of repair on this node together (tree builds, digest scans, both for this
 * node's repairs and for its peers'), so that repair leaves the disk and the CPU to the
 * clients. A flux is paced in chunks ({@link Throttle#pace(Flux, Scheduler)}): each chunk
 * waits until the rate allows it, on a timer, never blocking a thread. Zero means no
 * limit.
 */
final class Pacer {

	private final Throttle throttle;

	private final Scheduler timer;

	Pacer(long entriesPerSecond, Scheduler timer) {
		if (entriesPerSecond < 0) {
			throw new IllegalArgumentException("entries per second must not be negative");
		}
		this.throttle = (entriesPerSecond == 0) ? Throttle.NONE : new Throttle(entriesPerSecond);
		this.timer = timer;
	}

	<T> Flux<T> paced(Flux<T> source) {
		return this.throttle.pace(source, this.timer);
	}

}
