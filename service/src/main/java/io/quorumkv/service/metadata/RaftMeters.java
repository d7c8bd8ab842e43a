package io.quorumkv.service.metadata;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import java.util.regex.Matcher;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import org.apache.ratis.metrics.LongCounter;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.Timekeeper;
import org.jspecify.annotations.Nullable;

/** One member's metrics of one Ratis component, and the meters exported of them. */
final class RaftMeters implements RatisMetricRegistry {

	private final MetricRegistryInfo info;

	private final Map<String, Counter> counters = new ConcurrentHashMap<>();

	private final Map<String, Timer> timers = new ConcurrentHashMap<>();

	private final Map<String, Supplier<?>> gauges = new ConcurrentHashMap<>();

	private final Map<String, Meter> exported = new ConcurrentHashMap<>();

	RaftMeters(MetricRegistryInfo info) {
		this.info = info;
	}

	/** The node the metrics are of: the prefix's peer id ({@code <id>@group-...}). */
	String node() {
		String prefix = this.info.getPrefix();
		int at = prefix.lastIndexOf('@');
		return (at > 0) ? prefix.substring(0, at) : prefix;
	}

	private String group() {
		String prefix = this.info.getPrefix();
		int at = prefix.lastIndexOf('@');
		return (at > 0) ? prefix.substring(at + 1) : "none";
	}

	/**
	 * The meter's name: Ratis names some metrics after a peer
	 * ({@code follower_<id>_match_index}, {@code <id>_lastHeartbeatElapsedTime}); the id
	 * goes into a {@code peer} tag instead.
	 */
	private String name(String metric) {
		String plain = RaftMetrics.PEER.matcher(metric).replaceFirst("").replace("__", "_");
		plain = plain.startsWith("_") ? plain.substring(1) : plain;
		return "ratis." + this.info.getMetricsComponentName() + "." + plain;
	}

	private Tags tags(String metric) {
		Matcher peer = RaftMetrics.PEER.matcher(metric);
		Tags tags = Tags.of("group", group());
		return peer.find() ? tags.and("peer", peer.group(1)) : tags;
	}

	@Override
	public Timekeeper timer(String name) {
		Timer timer = this.timers.computeIfAbsent(name, (n) -> new Timer());
		export(name);
		return timer;
	}

	@Override
	public LongCounter counter(String name) {
		Counter counter = this.counters.computeIfAbsent(name, (n) -> new Counter());
		export(name);
		return counter;
	}

	@Override
	public boolean remove(String name) {
		Meter meter = this.exported.remove(name);
		MeterRegistry meters = RaftMetrics.EXPORTS.get(node());
		if (meter != null && meters != null) {
			meters.remove(meter);
		}
		return this.counters.remove(name) != null | this.timers.remove(name) != null | this.gauges.remove(name) != null;
	}

	@Override
	public <T> void gauge(String name, Supplier<Supplier<T>> gaugeSupplier) {
		this.gauges.put(name, gaugeSupplier.get());
		export(name);
	}

	@Override
	public MetricRegistryInfo getMetricRegistryInfo() {
		return this.info;
	}

	void exportAll() {
		List<String> names = new ArrayList<>(this.counters.keySet());
		names.addAll(this.timers.keySet());
		names.addAll(this.gauges.keySet());
		names.forEach(this::export);
	}

	void unexportAll(MeterRegistry meters) {
		List<Meter> removed = new ArrayList<>(this.exported.values());
		this.exported.clear();
		removed.forEach(meters::remove);
	}

	/** Registers the metric with the node's Micrometer registry, once. */
	private void export(String metric) {
		MeterRegistry meters = RaftMetrics.EXPORTS.get(node());
		if (meters == null || this.exported.containsKey(metric)) {
			return;
		}
		try {
			Meter meter = register(metric, meters);
			if (meter != null) {
				this.exported.put(metric, meter);
			}
		}
		catch (IllegalArgumentException ex) {
			// A name Micrometer's registry refuses (another meter's type or tags):
			// left out, never a failure of Ratis.
		}
	}

	private @Nullable Meter register(String metric, MeterRegistry meters) {
		Meter meter = null;
		Counter counter = this.counters.get(metric);
		Timer timer = this.timers.get(metric);
		Supplier<?> gauge = this.gauges.get(metric);
		if (counter != null) {
			meter = FunctionCounter.builder(name(metric), counter, Counter::getCount)
				.tags(tags(metric))
				.description(this.info.getMetricsDescription())
				.register(meters);
		}
		else if (timer != null) {
			meter = FunctionTimer
				.builder(name(metric), timer, (t) -> t.count.sum(), (t) -> t.nanos.sum(), TimeUnit.NANOSECONDS)
				.tags(tags(metric))
				.description(this.info.getMetricsDescription())
				.register(meters);
		}
		else if (gauge != null) {
			meter = Gauge
				.builder(name(metric), gauge, (g) -> (g.get() instanceof Number n) ? n.doubleValue() : Double.NaN)
				.tags(tags(metric))
				.description(this.info.getMetricsDescription())
				.strongReference(true)
				.register(meters);
		}
		return meter;
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
