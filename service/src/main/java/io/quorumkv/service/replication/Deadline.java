package io.quorumkv.service.replication;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Subscribes to a call that must end within a deadline, and arms the deadline's timer
 * only if the call did not end while being subscribed to. The local storage's answers
 * mostly arrive at once (the LSM answers on the caller's thread): {@code Mono.timeout}
 * would schedule and cancel a timer on another thread for every one of them, waking that
 * thread twice per request (it cost a single node about a sixth of its CPU under load,
 * docs/performance.md).
 */
final class Deadline {

	private Deadline() {
	}

	/**
	 * Runs {@code call}; exactly one of {@code onValue} (with null when it completed
	 * empty) and {@code onError} ({@link TimeoutException} past {@code timeout}) follows.
	 */
	static <T> void subscribe(Mono<T> call, Duration timeout, Scheduler timers, Consumer<@Nullable T> onValue,
			Consumer<Throwable> onError) {
		AtomicBoolean ended = new AtomicBoolean();
		AtomicReference<@Nullable Disposable> timer = new AtomicReference<>();
		Disposable subscription = call.subscribe((value) -> {
			if (ended.compareAndSet(false, true)) {
				cancel(timer);
				onValue.accept(value);
			}
		}, (error) -> {
			if (ended.compareAndSet(false, true)) {
				cancel(timer);
				onError.accept(error);
			}
		}, () -> {
			if (ended.compareAndSet(false, true)) {
				cancel(timer);
				onValue.accept(null);
			}
		});
		if (ended.get()) {
			return;
		}
		timer.set(timers.schedule(() -> {
			if (ended.compareAndSet(false, true)) {
				subscription.dispose();
				onError.accept(new TimeoutException("no answer within " + timeout.toMillis() + " ms"));
			}
		}, timeout.toNanos(), TimeUnit.NANOSECONDS));
		if (ended.get()) {
			// The call ended between the check and the timer's start.
			cancel(timer);
		}
	}

	private static void cancel(AtomicReference<@Nullable Disposable> timer) {
		Disposable armed = timer.getAndSet(null);
		if (armed != null) {
			armed.dispose();
		}
	}

}
