package io.quorumkv.storage;

import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot of a backend's counters and gauges, polled by the service for metrics and
 * health.
 *
 * <p>
 * Names are dotted and lower case ({@code "memtable.bytes"}, {@code "flush.bytes"}); the
 * service prefixes them with {@code quorumkv.storage.}. Counters only grow during a
 * backend's life; gauges are current values.
 *
 * @param backend the backend's name ({@code lsm}, {@code h2}, {@code derby})
 * @param counters monotonic counts (operations, bytes written)
 * @param gauges current values (sizes, queue lengths)
 * @param failure the first background failure, sticky, or {@code null} while healthy
 */
public record StorageStats(String backend, Map<String, Long> counters, Map<String, Long> gauges,
		@Nullable String failure) {

	public StorageStats {
		Objects.requireNonNull(backend, "backend");
		counters = Map.copyOf(counters);
		gauges = Map.copyOf(gauges);
	}

	public boolean healthy() {
		return this.failure == null;
	}

}
