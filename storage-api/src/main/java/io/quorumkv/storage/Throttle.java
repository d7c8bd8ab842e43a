package io.quorumkv.storage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A rate of units (entries, bytes) a second, shared by the work it paces: each piece
 * reserves its share of time after the pieces before it. Time not used (a slow consumer,
 * a pause) is not saved up, so a throttle never allows a burst above its rate after one.
 * Background work uses it to leave the cores to the requests: a clean-up's scan
 * ({@link Storage#retain(java.util.function.Predicate, long)}), a transfer's stream, a
 * repair's scans.
 *
 * <pre>{@code
 * Throttle throttle = new Throttle(50_000);
 * Flux<Entry> paced = throttle.pace(storage.scan(from, null));
 * }</pre>
 */
public final class Throttle {

	/** The rate of a throttle that never waits. */
	public static final long UNLIMITED = Long.MAX_VALUE;

	/** A throttle that never waits (it keeps no state, so any caller may share it). */
	public static final Throttle NONE = new Throttle(UNLIMITED);

	private static final long MAX_SLEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private final long perSecond;

	private final double nanosPerUnit;

	private long next;

	/**
	 * @param perSecond the rate, positive; {@link #UNLIMITED} for none
	 * @throws IllegalArgumentException when it is not positive
	 */
	public Throttle(long perSecond) {
		if (perSecond <= 0) {
			throw new IllegalArgumentException("a rate is positive, not " + perSecond);
		}
		this.perSecond = perSecond;
		this.nanosPerUnit = (perSecond == UNLIMITED) ? 0 : 1e9 / perSecond;
	}

	/** Whether this throttle never waits. */
	public boolean unlimited() {
		return this.perSecond == UNLIMITED;
	}

	/**
	 * Reserves the time of {@code units} after the work reserved before.
	 * @return how long the caller waits before it goes, in nanoseconds (0 when due)
	 */
	public long reserve(long units) {
		if (unlimited()) {
			return 0;
		}
		synchronized (this) {
			long now = System.nanoTime();
			long start = Math.max(now, this.next);
			this.next = start + (long) (units * this.nanosPerUnit);
			return start - now;
		}
	}

	/**
	 * The units worth pacing together: about 10 ms of the rate, from 1 to 1,024, so that
	 * a piece costs one reservation and one wait of at most about that long.
	 */
	public int chunk() {
		return (int) Math.max(1, Math.min(1_024, this.perSecond / 100));
	}

	/**
	 * Blocks the calling thread for the share of {@code units}, in waits of at most 50 ms
	 * between which {@code stop} is asked.
	 * @return false when {@code stop} answered true (the rest of the wait is skipped)
	 */
	public boolean acquire(long units, BooleanSupplier stop) {
		long wait = reserve(units);
		if (wait <= 0) {
			return !stop.getAsBoolean();
		}
		long deadline = System.nanoTime() + wait;
		for (long left = wait; left > 0; left = deadline - System.nanoTime()) {
			if (stop.getAsBoolean()) {
				return false;
			}
			LockSupport.parkNanos(Math.min(left, MAX_SLEEP_NANOS));
		}
		return !stop.getAsBoolean();
	}

	/**
	 * {@code source} at this rate, one unit an element: the elements go on in chunks
	 * ({@link #chunk()}), each after its share of time, waited for on Reactor's parallel
	 * scheduler; unchanged when unlimited.
	 */
	public <T> Flux<T> pace(Flux<T> source) {
		return pace(source, Schedulers.parallel());
	}

	/**
	 * As {@link #pace(Flux)}, waiting on {@code timer}: no thread is blocked.
	 */
	public <T> Flux<T> pace(Flux<T> source, Scheduler timer) {
		if (unlimited()) {
			return source;
		}
		return source.buffer(chunk(), ArrayList::new).concatMap((List<T> piece) -> {
			long wait = reserve(piece.size());
			Flux<T> items = Flux.fromIterable(piece);
			return (wait <= 0) ? items : Mono.delay(Duration.ofNanos(wait), timer).thenMany(items);
		}, 1);
	}

}
