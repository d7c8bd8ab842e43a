package io.quorumkv.service.ops;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Statistic;
import io.quorumkv.service.backup.Restore;
import io.quorumkv.service.backup.RestoreProgress;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageStats;
import org.jspecify.annotations.Nullable;

/**
 * The text tables of {@code scripts/qkv} ({@code status}, {@code ring}, {@code hints},
 * {@code storage}) and the parts of the JSON view they share, drawn from what this node
 * knows.
 */
final class NodeTables {

	private static final List<String> HINT_METERS = List.of("stored", "delivered", "dropped");

	private final ClusterState state;

	private final Storage storage;

	private final MeterRegistry meters;

	private final ClusterView cluster;

	private final Restore restore;

	NodeTables(ClusterState state, Storage storage, MeterRegistry meters, ClusterView cluster, Restore restore) {
		this.state = state;
		this.storage = storage;
		this.meters = meters;
		this.cluster = cluster;
		this.restore = restore;
	}

	private String self() {
		return this.state.self().base();
	}

	/** The ring's placement, as the tables and the JSON view name it. */
	String strategy() {
		Ring ring = this.state.ring().orElse(null);
		if (ring == null) {
			return "none (not a member yet)";
		}
		String name = RingJson.strategyLabel(ring.strategy());
		return (ring.strategy() == PlacementStrategy.CONSISTENT_HASH)
				? name + " (" + ring.virtualNodes() + " virtual nodes)" : name;
	}

	/**
	 * Hints pending over {@code nodes}, and stored, delivered and dropped since start.
	 */
	Map<String, Object> hints(List<Map<String, @Nullable Object>> nodes) {
		Map<String, Object> hints = new LinkedHashMap<>();
		hints.put("pending", nodes.stream().mapToLong((node) -> (Long) node.get("pendingHints")).sum());
		for (String name : HINT_METERS) {
			hints.put(name, count("quorumkv.hints." + name));
		}
		return hints;
	}

	private long count(String name) {
		double sum = 0;
		for (Meter meter : this.meters.find(name).meters()) {
			for (Measurement measurement : meter.measure()) {
				if (measurement.getStatistic() == Statistic.COUNT) {
					sum += measurement.getValue();
				}
			}
		}
		return (long) sum;
	}

	/** {@code qkv status}: each node as this one sees it. */
	String status() {
		StorageStats stats = this.storage.stats();
		TextTable table = new TextTable("NODE", "STATE", "SEEN", "BREAKER", "LAST", "IN-FLIGHT", "P50-MS", "P99-MS",
				"MEAN-MS", "HINTS", "OWNS");
		for (Map<String, @Nullable Object> node : this.cluster.nodes()) {
			@SuppressWarnings("unchecked")
			Map<String, Object> latency = (Map<String, Object>) node.get("latency");
			Object inFlight = (node.get("maxInFlight") != null) ? node.get("inFlight") + "/" + node.get("maxInFlight")
					: null;
			table.row(node.get("url"), node.get("state"), seen(node.get("seen")), node.get("breaker"),
					node.get("lastOutcome"), inFlight, (latency != null) ? latency.get("p50Ms") : null,
					(latency != null) ? latency.get("p99Ms") : null, (latency != null) ? latency.get("meanMs") : null,
					node.get("pendingHints"), percent((Double) node.get("primaryShare")));
		}
		RestoreProgress restoring = this.restore.progress();
		return "node " + self() + ": placement " + strategy() + ", backend " + stats.backend() + ", storage "
				+ (stats.healthy() ? "healthy" : "FAILED: " + stats.failure()) + "\n" + table
				+ ((restoring != null) ? restoring.line() + "\n" : "");
	}

	/**
	 * The shared view of a peer ({@link io.quorumkv.service.metadata.Liveness}):
	 * {@code up} or {@code down} and how long ago it was heard, e.g. {@code up 0.4s};
	 * null for this node and for a node never seen.
	 */
	static @Nullable String seen(@Nullable Object view) {
		if (!(view instanceof Map<?, ?> seen)) {
			return null;
		}
		long ago = ((Number) seen.get("heardMsAgo")).longValue();
		return (Boolean.TRUE.equals(seen.get("up")) ? "up " : "down ")
				+ String.format(Locale.ROOT, "%.1fs", ago / 1000.0);
	}

	/** {@code qkv ring}: the ring and each node's share of the sample keys. */
	String ring() {
		Map<Integer, Map<String, Double>> spread = this.cluster.spread();
		String[] header = new String[spread.size() + 3];
		header[0] = "NODE";
		header[1] = "URL";
		header[2] = "STATE";
		int column = 3;
		for (int from : spread.keySet()) {
			header[column++] = "FROM=" + from;
		}
		TextTable table = new TextTable(header);
		Ring ring = this.state.ring().orElse(null);
		if (ring == null) {
			return "node " + self() + ": no ring yet; it waits to be joined (scripts/qkv join " + self() + ")\n";
		}
		for (RingNode node : ring.nodes()) {
			Object[] row = new Object[header.length];
			row[0] = node.id();
			row[1] = node.url();
			row[2] = node.state().label();
			column = 3;
			for (Map<String, Double> shares : spread.values()) {
				row[column++] = percent(shares.get(node.id()));
			}
			table.row(row);
		}
		RingChange change = ring.change();
		return "node " + self() + ": cluster " + ring.clusterId() + ", epoch " + ring.epoch() + ", replication factor "
				+ ring.replicationFactor() + ", placement " + strategy()
				+ ((ring.generation().number() > 0) ? ", metadata generation " + ring.generation().number()
						+ " (fenced: " + ring.generation().fenced().stream().map((node) -> node.id()).toList() + ")"
						: "")
				+ ((change != null)
						? "; change " + change.id() + ": " + change.kind().label() + " of " + change.nodeId() + ", "
								+ change.phase().label() + ", asked of " + change.coordinator()
						: "; no change under way")
				+ "\nshare of " + ClusterView.SAMPLE_KEYS
				+ " sample keys whose replica set (new owners) includes the node\n" + table;
	}

	/** {@code qkv hints}: hints pending per peer and since start. */
	String hints() {
		List<Map<String, @Nullable Object>> nodes = this.cluster.nodes();
		TextTable table = new TextTable("PEER", "STATE", "PENDING");
		nodes.stream()
			.filter((node) -> !(Boolean) node.get("self"))
			.forEach((node) -> table.row(node.get("url"), node.get("state"), node.get("pendingHints")));
		Map<String, Object> totals = hints(nodes);
		return "node " + self() + ": hints pending " + totals.get("pending") + "; since start stored "
				+ totals.get("stored") + ", delivered " + totals.get("delivered") + ", dropped " + totals.get("dropped")
				+ "\n" + table;
	}

	/** {@code qkv storage}: the storage's counters. */
	String storage() {
		StorageStats stats = this.storage.stats();
		TextTable table = new TextTable("NAME", "VALUE");
		StorageView.rows(stats).forEach((name, value) -> table.row(name, value));
		return "node " + self() + ": backend " + stats.backend() + ", "
				+ (stats.healthy() ? "healthy" : "FAILED: " + stats.failure()) + "\n" + table;
	}

	private static @Nullable String percent(@Nullable Double share) {
		return (share != null) ? String.format(Locale.ROOT, "%.1f%%", share * 100) : null;
	}

}
