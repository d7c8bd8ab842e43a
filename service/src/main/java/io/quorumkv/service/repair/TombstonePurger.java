package io.quorumkv.service.repair;

import java.time.Duration;

import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Asks the storage to drop the tombstones its policy allows ({@link RepairedTombstones})
 * every {@code quorumkv.storage.purge-interval} (the SQL backends delete them in pages;
 * the LSM drops them in its compactions and answers at once). One pass at a time.
 */
final class TombstonePurger implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(TombstonePurger.class);

	private final Storage storage;

	private final Duration interval;

	private final Scheduler timer;

	private volatile Disposable ticker = () -> {
	};

	TombstonePurger(Storage storage, Duration interval, Scheduler timer) {
		this.storage = storage;
		this.interval = interval;
		this.timer = timer;
	}

	void start() {
		this.ticker = Flux.interval(this.interval, this.interval, this.timer)
			.onBackpressureDrop()
			.concatMap((tick) -> purge(), 1)
			.subscribe();
	}

	/** One pass; the tombstones dropped (never fails: a failure is logged). */
	Mono<Long> purge() {
		return this.storage.purgeTombstones().doOnNext((purged) -> {
			if (purged > 0) {
				logger.info("Purged " + purged + " tombstones");
			}
		}).onErrorResume((error) -> {
			logger.warn("Tombstone purge failed: " + error);
			return Mono.just(0L);
		});
	}

	@Override
	public void close() {
		this.ticker.dispose();
	}

}
