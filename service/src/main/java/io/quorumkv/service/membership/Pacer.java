package io.quorumkv.service.membership;

import java.time.Duration;

import io.quorumkv.storage.Throttle;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A byte rate: each piece of work waits for its share of time. Time not used (a slow
 * consumer, a pause) is not saved up, so a pacer never allows a burst above its rate
 * after one; a piece due within {@code slack} goes at once, so small pieces cost no timer
 * each, and the rate holds on average over the slack.
 */
final class Pacer {

	private final Throttle throttle;

	private final long slackNanos;

	private final Scheduler timer;

	/**
	 * @param bytesPerSecond the rate
	 * @param slack how far ahead of its time a piece may go
	 * @param timer where a delayed piece goes on
	 */
	Pacer(long bytesPerSecond, Duration slack, Scheduler timer) {
		this.throttle = new Throttle(bytesPerSecond);
		this.slackNanos = slack.toNanos();
		this.timer = timer;
	}

	/** Completes when {@code bytes} may go. */
	Mono<Void> delay(long bytes) {
		long wait = this.throttle.reserve(bytes);
		return (wait <= this.slackNanos) ? Mono.empty() : Mono.delay(Duration.ofNanos(wait), this.timer).then();
	}

}
