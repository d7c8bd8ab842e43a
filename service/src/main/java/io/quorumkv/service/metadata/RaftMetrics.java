package io.quorumkv.service.metadata;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.function.Consumer;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.util.TimeDuration;

/**
 * The registry Ratis records its metrics in (found through
 * {@link java.util.ServiceLoader} under {@code META-INF/services}): counters, timers and
 * gauges kept in memory, and exported to the Micrometer registry of the node they belong
 * to ({@link #export}) as {@code ratis.<component>.<name>} with a {@code group} tag:
 * leader elections, log appends and flushes, commits, snapshots, the leader's view of
 * each follower. Ratis' registries are one per JVM and name the member they measure
 * ({@code <node id>@group-<id>}); several nodes in one JVM (the tests) each get theirs.
 * Ratis needs a registry to run, and its default lives in an artifact of its own.
 */
public final class RaftMetrics extends MetricRegistries {

	/** The Micrometer registry of each node of this JVM that exports its Raft metrics. */
	static final Map<String, MeterRegistry> EXPORTS = new ConcurrentHashMap<>();

	/** A node id inside a metric's name: a URL or a generated id. */
	static final Pattern PEER = Pattern.compile("(https?://[^_]+|node-[0-9a-fA-F-]+)");

	/** Every registry Ratis made, in every instance (Ratis keeps one). */
	private static final Map<MetricRegistryInfo, RaftMeters> ALL = new ConcurrentHashMap<>();

	private final Map<MetricRegistryInfo, RatisMetricRegistry> registries = new ConcurrentHashMap<>();

	/**
	 * Exports the Raft metrics of node {@code nodeId} (those made already and those to
	 * come) to {@code meters}, until {@link #unexport}.
	 */
	static void export(String nodeId, MeterRegistry meters) {
		EXPORTS.put(nodeId, meters);
		ALL.values().forEach(RaftMeters::exportAll);
	}

	/** Stops exporting node {@code nodeId}'s Raft metrics and removes its meters. */
	static void unexport(String nodeId) {
		MeterRegistry meters = EXPORTS.remove(nodeId);
		if (meters != null) {
			ALL.values()
				.stream()
				.filter((registry) -> nodeId.equals(registry.node()))
				.forEach((registry) -> registry.unexportAll(meters));
		}
	}

	public RaftMetrics() {
	}

	@Override
	public void clear() {
		this.registries.keySet().forEach(this::remove);
	}

	@Override
	public RatisMetricRegistry create(MetricRegistryInfo info) {
		return this.registries.computeIfAbsent(info, (key) -> {
			RaftMeters registry = new RaftMeters(key);
			ALL.put(key, registry);
			return registry;
		});
	}

	@Override
	public boolean remove(MetricRegistryInfo info) {
		RaftMeters registry = ALL.remove(info);
		MeterRegistry meters = (registry != null) ? EXPORTS.get(registry.node()) : null;
		if (meters != null) {
			registry.unexportAll(meters);
		}
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

}
