package io.quorumkv.service.ops;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Statistic;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.replication.HintStore;
import io.quorumkv.service.replication.PeerClient;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageStats;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.stereotype.Component;

/**
 * {@code /actuator/quorumkv}: this node's view of the cluster (peers, placement, hints,
 * storage) for operators and the {@code scripts/qkv} tool, and two actions on the
 * storage.
 *
 * <ul>
 * <li>{@code GET /actuator/quorumkv}: everything, as JSON;</li>
 * <li>{@code GET /actuator/quorumkv/{status|ring|hints|storage}}: one part as an aligned
 * plain-text table;</li>
 * <li>{@code POST /actuator/quorumkv/flush}, {@code POST /actuator/quorumkv/compact}:
 * flushes or compacts the storage and answers once done.</li>
 * </ul>
 * Like every actuator endpoint but health, metrics and prometheus, it is reachable over
 * HTTP only when listed in {@code management.endpoints.web.exposure.include}.
 */
@Component
@Endpoint(id = "quorumkv")
public class QuorumKvEndpoint {

	private static final Log logger = LogFactory.getLog(QuorumKvEndpoint.class);

	private static final List<String> HINT_METERS = List.of("stored", "delivered", "dropped");

	private final ClusterState state;

	private final Storage storage;

	private final MeterRegistry meters;

	private final ClusterView cluster;

	public QuorumKvEndpoint(ClusterState state, PeerClient peers, HintStore hints, Storage storage,
			MeterRegistry meters) {
		this.state = state;
		this.storage = storage;
		this.meters = meters;
		this.cluster = new ClusterView(state, peers, hints, meters);
	}

	@ReadOperation
	public Map<String, @Nullable Object> view() {
		List<Map<String, @Nullable Object>> nodes = this.cluster.nodes();
		Map<String, @Nullable Object> view = new LinkedHashMap<>();
		view.put("node", self());
		view.put("ring", this.state.ring().map((ring) -> RingJson.map(ring)).orElse(null));
		view.put("placement", this.cluster.ring(strategy()));
		view.put("nodes", nodes);
		view.put("hints", hints(nodes));
		view.put("storage", StorageView.of(this.storage.stats()));
		return view;
	}

	@ReadOperation(produces = "text/plain")
	public String table(@Selector String section) {
		return switch (section) {
			case "status" -> statusTable();
			case "ring" -> ringTable();
			case "hints" -> hintsTable();
			case "storage" -> storageTable();
			default -> throw new InvalidEndpointRequestException("unknown section " + section,
					"unknown section; one of status, ring, hints, storage");
		};
	}

	@WriteOperation
	public Mono<Map<String, Object>> run(@Selector String action) {
		Mono<Void> work = switch (action) {
			case "flush" -> this.storage.flush();
			case "compact" -> this.storage.compact();
			default -> throw new InvalidEndpointRequestException("unknown action " + action,
					"unknown action; one of flush, compact");
		};
		return Mono.defer(() -> {
			long start = System.nanoTime();
			logger.info("Operator requested a storage " + action);
			return work.then(Mono.fromSupplier(() -> {
				Map<String, Object> done = new LinkedHashMap<>();
				done.put("node", self());
				done.put("action", action);
				done.put("durationMs", (System.nanoTime() - start) / 1_000_000);
				return done;
			}));
		});
	}

	private String self() {
		return this.state.self().base();
	}

	private String strategy() {
		Ring ring = this.state.ring().orElse(null);
		if (ring == null) {
			return "none (not a member yet)";
		}
		String name = RingJson.strategyLabel(ring.strategy());
		return (ring.strategy() == PlacementStrategy.CONSISTENT_HASH)
				? name + " (" + ring.virtualNodes() + " virtual nodes)" : name;
	}

	private Map<String, Object> hints(List<Map<String, @Nullable Object>> nodes) {
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

	private String statusTable() {
		StorageStats stats = this.storage.stats();
		TextTable table = new TextTable("NODE", "STATE", "BREAKER", "LAST", "IN-FLIGHT", "P50-MS", "P99-MS", "MEAN-MS",
				"HINTS", "OWNS");
		for (Map<String, @Nullable Object> node : this.cluster.nodes()) {
			@SuppressWarnings("unchecked")
			Map<String, Object> latency = (Map<String, Object>) node.get("latency");
			Object inFlight = (node.get("maxInFlight") != null) ? node.get("inFlight") + "/" + node.get("maxInFlight")
					: null;
			table.row(node.get("url"), node.get("state"), node.get("breaker"), node.get("lastOutcome"), inFlight,
					(latency != null) ? latency.get("p50Ms") : null, (latency != null) ? latency.get("p99Ms") : null,
					(latency != null) ? latency.get("meanMs") : null, node.get("pendingHints"),
					percent((Double) node.get("primaryShare")));
		}
		return "node " + self() + ": placement " + strategy() + ", backend " + stats.backend() + ", storage "
				+ (stats.healthy() ? "healthy" : "FAILED: " + stats.failure()) + "\n" + table;
	}

	private String ringTable() {
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
				+ ((change != null)
						? "; change " + change.id() + ": " + change.kind().label() + " of " + change.nodeId() + ", "
								+ change.phase().label() + ", coordinated by " + change.coordinator()
						: "; no change under way")
				+ "\nshare of " + ClusterView.SAMPLE_KEYS
				+ " sample keys whose replica set (new owners) includes the node\n" + table;
	}

	private String hintsTable() {
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

	private String storageTable() {
		StorageStats stats = this.storage.stats();
		TextTable table = new TextTable("NAME", "VALUE");
		StorageView.derived(stats).forEach((name, value) -> {
			if (value instanceof List<?> levels) {
				for (Object level : levels) {
					Map<?, ?> entry = (Map<?, ?>) level;
					table.row("tables in level " + entry.get("level"), entry.get("tables"));
				}
			}
			else {
				table.row(name, value);
			}
		});
		stats.counters()
			.entrySet()
			.stream()
			.sorted(Map.Entry.comparingByKey())
			.forEach((e) -> table.row(e.getKey(), e.getValue()));
		stats.gauges()
			.entrySet()
			.stream()
			.sorted(Map.Entry.comparingByKey())
			.forEach((e) -> table.row(e.getKey(), e.getValue()));
		return "node " + self() + ": backend " + stats.backend() + ", "
				+ (stats.healthy() ? "healthy" : "FAILED: " + stats.failure()) + "\n" + table;
	}

	private static @Nullable String percent(@Nullable Double share) {
		return (share != null) ? String.format(Locale.ROOT, "%.1f%%", share * 100) : null;
	}

}
