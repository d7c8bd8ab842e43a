package io.quorumkv.service.ops;

import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageStats;

import org.springframework.stereotype.Component;

/**
 * Publishes the backend's {@link StorageStats} as meters: every counter as
 * {@code quorumkv.storage.<name>} (a function counter) and every gauge as
 * {@code quorumkv.storage.<name>}, tagged with the backend. Names are learnt from the
 * first snapshot; values are read on each scrape.
 */
@Component
class StorageMetrics implements MeterBinder {

	private final Storage storage;

	StorageMetrics(Storage storage) {
		this.storage = storage;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		StorageStats first = this.storage.stats();
		Tags tags = Tags.of("backend", first.backend());
		for (String name : first.counters().keySet()) {
			FunctionCounter
				.builder("quorumkv.storage." + name, this.storage, value((stats) -> stats.counters().get(name)))
				.tags(tags)
				.register(registry);
		}
		for (String name : first.gauges().keySet()) {
			Gauge.builder("quorumkv.storage." + name, this.storage, value((stats) -> stats.gauges().get(name)))
				.tags(tags)
				.register(registry);
		}
	}

	private static ToDoubleFunction<Storage> value(java.util.function.Function<StorageStats, Long> read) {
		return (storage) -> {
			Long value = read.apply(storage.stats());
			return (value != null) ? value : Double.NaN;
		};
	}

}
