package io.quorumkv.service.http;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import org.springframework.stereotype.Component;

/**
 * The timer {@code quorumkv.requests} of every public request, tagged with the operation
 * ({@code get}, {@code put}, {@code delete}, {@code range}, {@code status}) and the
 * status code. Timers are created once per (operation, status) and cached.
 */
@Component
public class RequestMetrics {

	private final MeterRegistry registry;

	private final ConcurrentMap<String, Timer> timers = new ConcurrentHashMap<>();

	public RequestMetrics(MeterRegistry registry) {
		this.registry = registry;
	}

	void record(String operation, int status, long startNanos) {
		String id = operation + status;
		Timer timer = this.timers.get(id);
		if (timer == null) {
			timer = this.timers.computeIfAbsent(id,
					(k) -> Timer.builder("quorumkv.requests")
						.description("Public API requests by operation and status")
						.tag("op", operation)
						.tag("status", Integer.toString(status))
						.publishPercentileHistogram()
						.register(this.registry));
		}
		timer.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
	}

}
