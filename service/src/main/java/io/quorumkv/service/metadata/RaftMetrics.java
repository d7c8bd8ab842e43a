package io.quorumkv.service.metadata;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.apache.ratis.metrics.LongCounter;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.Timekeeper;
import org.apache.ratis.util.TimeDuration;

/**
 * The registry Ratis records its metrics in (found through
 * {@link java.util.ServiceLoader} under {@code META-INF/services}): counters and timers
 * kept in memory, no reporter. Ratis needs one to run, and its default lives in an
 * artifact of its own; the node's own metrics of the metadata layer are Micrometer's.
 */
public final class RaftMetrics extends MetricRegistries {

	private final Map<MetricRegistryInfo, RatisMetricRegistry> registries = new ConcurrentHashMap<>();

	public RaftMetrics() {
	}

	@Override
	public void clear() {
		this.registries.clear();
	}

	@Override
	public RatisMetricRegistry create(MetricRegistryInfo info) {
		return this.registries.computeIfAbsent(info, Registry::new);
	}

	@Override
	public boolean remove(MetricRegistryInfo info) {
		return this.registries.remove(info) != null;
	}

	@Override
	public Optional<RatisMetricRegistry> get(MetricRegistryInfo info) {
		return Optional.ofNullable(this.registries.get(info));
	}

	@Override
	public Set<MetricRegistryInfo> getMetricRegistryInfos() {
		return Set.copyOf(this.registries.keySet());
	}

	@Override
	public Collection<RatisMetricRegistry> getMetricRegistries() {
		return List.copyOf(this.registries.values());
	}

	@Override
	public void addReporterRegistration(Consumer<RatisMetricRegistry> reporterRegistration,
			Consumer<RatisMetricRegistry> stopReporter) {
		// No reporter: nothing to register.
	}

	@Override
	public void enableJmxReporter() {
	}

	@Override
	public void enableConsoleReporter(TimeDuration consoleReportRate) {
	}

	private record Registry(MetricRegistryInfo info, Map<String, Counter> counters, Map<String, Timer> timers,
			Map<String, Supplier<?>> gauges) implements RatisMetricRegistry {

		Registry(MetricRegistryInfo info) {
			this(info, new ConcurrentHashMap<>(), new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
		}

		@Override
		public Timekeeper timer(String name) {
			return this.timers.computeIfAbsent(name, (n) -> new Timer());
		}

		@Override
		public LongCounter counter(String name) {
			return this.counters.computeIfAbsent(name, (n) -> new Counter());
		}

		@Override
		public boolean remove(String name) {
			return this.counters.remove(name) != null | this.timers.remove(name) != null
					| this.gauges.remove(name) != null;
		}

		@Override
		public <T> void gauge(String name, Supplier<Supplier<T>> gaugeSupplier) {
			this.gauges.put(name, gaugeSupplier.get());
		}

		@Override
		public MetricRegistryInfo getMetricRegistryInfo() {
			return this.info;
		}

	}

	private static final class Counter implements LongCounter {

		private final LongAdder count = new LongAdder();

		@Override
		public void inc(long n) {
			this.count.add(n);
		}

		@Override
		public void dec(long n) {
			this.count.add(-n);
		}

		@Override
		public long getCount() {
			return this.count.sum();
		}

	}

	private static final class Timer implements Timekeeper {

		private final LongAdder count = new LongAdder();

		private final LongAdder nanos = new LongAdder();

		@Override
		public Context time() {
			long start = System.nanoTime();
			return () -> {
				long elapsed = System.nanoTime() - start;
				this.count.increment();
				this.nanos.add(elapsed);
				return elapsed;
			};
		}

	}

}
