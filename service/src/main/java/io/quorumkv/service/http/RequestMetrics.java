package io.quorumkv.service.http;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import org.springframework.stereotype.Component;

/**
 * The timer {@code quorumkv.requests} of every public request, tagged with the operation
 * ({@code get}, {@code put}, {@code delete}, {@code range}, {@code status}) and the
 * status code. Timers are created once per (operation, status) and cached, looked up
 * without building a key per request.
 */
@Component
class RequestMetrics {

	private static final int MAX_STATUS = 599;

	private final MeterRegistry registry;

	/** Per operation, the timers by status code (100 to 599). */
	private final ConcurrentMap<String, AtomicReferenceArray<Timer>> timers = new ConcurrentHashMap<>();

	RequestMetrics(MeterRegistry registry) {
		this.registry = registry;
	}

	void record(String operation, int status, long startNanos) {
		AtomicReferenceArray<Timer> byStatus = this.timers.computeIfAbsent(operation,
				(op) -> new AtomicReferenceArray<>(MAX_STATUS + 1));
		boolean cached = status >= 0 && status <= MAX_STATUS;
		Timer timer = cached ? byStatus.get(status) : null;
		if (timer == null) {
			// Registering twice (a race) returns the same timer: the registry keeps one
			// meter per name and tags.
			timer = Timer.builder("quorumkv.requests")
				.description("Public API requests by operation and status")
				.tag("op", operation)
				.tag("status", Integer.toString(status))
				.publishPercentileHistogram()
				.register(this.registry);
			if (cached) {
				byStatus.set(status, timer);
			}
		}
		timer.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
	}

}
