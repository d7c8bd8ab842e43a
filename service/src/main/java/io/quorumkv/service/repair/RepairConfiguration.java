package io.quorumkv.service.repair;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.ClusterProperties;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.peer.Pacer;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.storage.StorageProperties;
import io.quorumkv.storage.Storage;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Repair's beans: the ranges and their replicas (the ring's placement), the history of
 * repaired ranges, the served sessions, the repair service and its schedule, on threads
 * of their own (two, {@code quorumkv-repair-*}) paced by one rate limit.
 */
@Configuration(proxyBeanMethods = false)
class RepairConfiguration {

	@Bean
	RangeReplicas rangeReplicas(ClusterState cluster, RepairProperties repair) {
		return new RingRangeReplicas(cluster, repair.ranges());
	}

	@Bean
	RepairThreads repairThreads() {
		return new RepairThreads(Schedulers.newBoundedElastic(2, 1024, "quorumkv-repair", 60, true));
	}

	@Bean
	RepairHistory repairHistory(StorageProperties settings) throws IOException {
		return RepairHistory.open(settings.path().resolve("repair-history"));
	}

	@Bean
	RepairSettings repairSettings(HttpProperties http, RepairProperties repair) {
		return RepairSettings.of(repair, (int) http.maxKeySize().toBytes());
	}

	@Bean
	Pacer repairPacer(RepairProperties repair, RepairThreads threads) {
		return new Pacer(repair.maxEntriesPerSecond(), Duration.ZERO, threads.scheduler());
	}

	@Bean
	RepairSessions repairSessions(Storage storage, RepairSettings settings, Pacer pacer, RepairThreads threads,
			RepairHistory history, RangeReplicas ranges, ClusterState cluster, MeterRegistry meters) {
		return new RepairSessions(storage, settings, pacer, threads.scheduler(), history, ranges, cluster.self().id(),
				meters);
	}

	@Bean
	RepairService repairService(ClusterState cluster, Storage storage, PeerClient peers, HybridLogicalClock clock,
			ClockGuard guard, RangeReplicas ranges, RepairSettings settings, Pacer pacer, RepairThreads threads,
			RepairHistory history, RepairProperties repair, MeterRegistry meters) {
		RepairContext context = new RepairContext(cluster.self(), storage, new RepairPeers(peers, settings), guard,
				settings, pacer, threads.scheduler());
		return new RepairService(context, ranges, clock, history,
				new RepairMetrics(meters, new RepairMetrics.RangeSlices() {

					@Override
					public int size() {
						return repair.ranges();
					}

					@Override
					public java.util.Optional<RepairRange> rangeOf(int index) {
						List<RepairRange> all = ranges.ranges();
						return (index < all.size()) ? java.util.Optional.of(all.get(index))
								: java.util.Optional.empty();
					}

				}, history));
	}

	/**
	 * The node's tombstone rule, set on its storage, and the periodic purge (started and
	 * stopped with the repair schedule).
	 */
	@Bean
	TombstonePurger tombstonePurger(Storage storage, RangeReplicas ranges, RepairHistory history,
			HybridLogicalClock clock, RepairThreads threads, StorageProperties settings, ClusterProperties cluster,
			MeterRegistry meters) {
		storage.purgePolicy(new RepairedTombstones(ranges, history, clock, settings.tombstoneGracePeriod(),
				cluster.maxClockSkew().plus(cluster.replicaTimeout()), meters));
		return new TombstonePurger(storage, settings.purgeInterval(), threads.scheduler());
	}

	/**
	 * The schedule, started with the context and stopped before the web server (phase
	 * above it), so that no repair starts while the node shuts down.
	 */
	@Bean
	SmartLifecycle repairSchedule(RepairService service, TombstonePurger purger, RepairThreads threads,
			RepairProperties repair) {
		RepairScheduler scheduler = new RepairScheduler(service, repair.interval(), repair.jitter(),
				threads.scheduler());
		return new SmartLifecycle() {

			private volatile boolean running;

			@Override
			public void start() {
				if (repair.scheduled()) {
					scheduler.start();
				}
				purger.start();
				this.running = true;
			}

			@Override
			public void stop() {
				scheduler.close();
				purger.close();
				this.running = false;
			}

			@Override
			public boolean isRunning() {
				return this.running;
			}

			@Override
			public int getPhase() {
				return Integer.MAX_VALUE - 100;
			}

		};
	}

	/** Repair's threads, disposed with the context. */
	record RepairThreads(Scheduler scheduler) implements AutoCloseable {

		@Override
		public void close() {
			this.scheduler.dispose();
		}

	}

}
