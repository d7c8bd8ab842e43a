package io.quorumkv.service.ops;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageStats;
import reactor.core.publisher.Mono;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.stereotype.Component;

/**
 * {@code storage} in {@code /actuator/health}: down once the backend reports a (sticky)
 * background failure, with the backend's gauges as details.
 */
@Component
class StorageHealthIndicator implements ReactiveHealthIndicator {

	private final Storage storage;

	StorageHealthIndicator(Storage storage) {
		this.storage = storage;
	}

	@Override
	public Mono<Health> health() {
		return Mono.fromSupplier(() -> {
			StorageStats stats = this.storage.stats();
			Health.Builder builder = stats.healthy() ? Health.up()
					: Health.down().withDetail("failure", stats.failure());
			return builder.withDetail("backend", stats.backend()).withDetails(stats.gauges()).build();
		});
	}

}
