package io.quorumkv.service.peer;

import java.time.Duration;

import io.quorumkv.storage.Throttle;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The rate of a node's background streams between nodes (a transfer's bytes, repair's
 * entries), shared by every piece of work it paces: each piece waits for its share of
 * time ({@link Throttle}), on a timer, never blocking a thread. Time not used (a slow
 * consumer, a pause) is not saved up, so a pacer never allows a burst above its rate
 * after one; a piece due within the slack goes at once, so small pieces cost no timer
 * each, and the rate holds on average over the slack.
 */
public final class Pacer {

	private final Throttle throttle;

	private final long slackNanos;

	private final Scheduler timer;

	/**
	 * @param perSecond the rate in units (bytes, entries) a second; zero for no limit
	 * @param slack how far ahead of its time a piece may go
	 * @param timer where a delayed piece goes on
	 * @throws IllegalArgumentException when the rate is negative
	 */
	public Pacer(long perSecond, Duration slack, Scheduler timer) {
		if (perSecond < 0) {
			throw new IllegalArgumentException("a rate must not be negative, not " + perSecond);
		}
		this.throttle = (perSecond == 0) ? Throttle.NONE : new Throttle(perSecond);
		this.slackNanos = slack.toNanos();
		this.timer = timer;
	}

	/** Completes when {@code units} may go. */
	public Mono<Void> delay(long units) {
		long wait = this.throttle.reserve(units);
		return (wait <= this.slackNanos) ? Mono.empty() : Mono.delay(Duration.ofNanos(wait), this.timer).then();
	}

	/**
	 * {@code source} at this rate, one unit an element, in chunks of about 10 ms of the
	 * rate ({@link Throttle#pace(Flux, Scheduler)}); unchanged when unlimited.
	 */
	public <T> Flux<T> paced(Flux<T> source) {
		return this.throttle.pace(source, this.timer);
	}

}
