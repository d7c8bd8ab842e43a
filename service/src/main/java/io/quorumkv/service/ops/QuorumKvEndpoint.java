package io.quorumkv.service.ops;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Statistic;
import io.quorumkv.service.cluster.Placement;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.replication.HintStore;
import io.quorumkv.service.repair.RepairService;
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
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
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
 * flushes or compacts the storage (and then drops the tombstones the node allows) and
 * answers once done.</li>
 * <li>{@code POST /actuator/quorumkv/repair}: repairs every range this node holds with
 * all its replicas and answers the report once done ({@code repair-primary}: only the
 * ranges this node is the primary of); 409 while a repair of the node runs.
 * {@code GET /actuator/quorumkv/repair}: each range's last successful repair.</li>
 * </ul>
 * Like every actuator endpoint but health, metrics and prometheus, it is reachable over
 * HTTP only when listed in {@code management.endpoints.web.exposure.include}.
 */
@Component
@Endpoint(id = "quorumkv")
public class QuorumKvEndpoint {

	private static final Log logger = LogFactory.getLog(QuorumKvEndpoint.class);

	private static final List<String> HINT_METERS = List.of("stored", "delivered", "dropped");

	private final Topology topology;

	private final QuorumKvProperties properties;

	private final Storage storage;

	private final MeterRegistry meters;

	private final ClusterView cluster;

	private final RepairService repair;

	private final RepairView repairView;

	public QuorumKvEndpoint(Topology topology, Placement placement, PeerClient peers, HintStore hints, Storage storage,
			RepairService repair, QuorumKvProperties properties, MeterRegistry meters) {
		this.topology = topology;
		this.properties = properties;
		this.storage = storage;
		this.meters = meters;
		this.cluster = new ClusterView(topology, placement, peers, hints, meters);
		this.repair = repair;
		this.repairView = new RepairView(repair, topology.self());
	}

	@ReadOperation
	public Map<String, @Nullable Object> view() {
		List<Map<String, @Nullable Object>> nodes = this.cluster.nodes();
		Map<String, @Nullable Object> view = new LinkedHashMap<>();
		view.put("node", this.topology.self().id());
		view.put("placement", this.cluster.ring(strategy()));
		view.put("nodes", nodes);
		view.put("hints", hints(nodes));
		view.put("storage", StorageView.of(this.storage.stats()));
		view.put("repair", this.repairView.json());
		return view;
	}

	@ReadOperation(produces = "text/plain")
	public String table(@Selector String section) {
		return switch (section) {
			case "status" -> statusTable();
			case "ring" -> ringTable();
			case "hints" -> hintsTable();
			case "storage" -> storageTable();
			case "repair" -> this.repairView.table();
			default -> throw new InvalidEndpointRequestException("unknown section " + section,
					"unknown section; one of status, ring, hints, storage, repair");
		};
	}

	@WriteOperation
	public Mono<WebEndpointResponse<Map<String, Object>>> run(@Selector String action) {
		if (action.equals("repair") || action.equals("repair-primary")) {
			return repair(action.equals("repair") ? RepairService.Scope.ALL : RepairService.Scope.PRIMARY);
		}
		// A compaction is followed by a purge pass: the SQL backends drop the tombstones
		// the node allows there, the LSM did in its compaction.
		Mono<Long> work = switch (action) {
			case "flush" -> this.storage.flush().thenReturn(-1L);
			case "compact" -> this.storage.compact().then(this.storage.purgeTombstones());
			default -> throw new InvalidEndpointRequestException("unknown action " + action,
					"unknown action; one of flush, compact, repair, repair-primary");
		};
		return Mono.defer(() -> {
			long start = System.nanoTime();
			logger.info("Operator requested a storage " + action);
			return work.map((purged) -> {
				Map<String, Object> done = new LinkedHashMap<>();
				done.put("node", this.topology.self().id());
				done.put("action", action);
				done.put("durationMs", (System.nanoTime() - start) / 1_000_000);
				if (purged >= 0) {
					done.put("tombstonesPurged", purged);
				}
				return new WebEndpointResponse<>(done);
			});
		});
	}

	private Mono<WebEndpointResponse<Map<String, Object>>> repair(RepairService.Scope scope) {
		return this.repair.repair(scope).map((report) -> {
			Map<String, Object> done = new LinkedHashMap<>();
			done.put("node", this.topology.self().id());
			done.put("action", (scope == RepairService.Scope.ALL) ? "repair" : "repair-primary");
			done.putAll(RepairView.report(report));
			return new WebEndpointResponse<>(done);
		}).onErrorResume(RepairService.RepairRunningException.class, (running) -> {
			Map<String, Object> refused = new LinkedHashMap<>();
			refused.put("node", this.topology.self().id());
			refused.put("error", running.getMessage());
			return Mono.just(new WebEndpointResponse<>(refused, 409));
		});
	}

	private String strategy() {
		PlacementStrategy strategy = this.properties.cluster().placement();
		String name = strategy.name().toLowerCase(Locale.ROOT).replace('_', '-');
		return (strategy == PlacementStrategy.CONSISTENT_HASH)
				? name + " (" + this.properties.cluster().virtualNodes() + " virtual nodes)" : name;
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
		return "node " + this.topology.self().id() + ": placement " + strategy() + ", backend " + stats.backend()
				+ ", storage " + (stats.healthy() ? "healthy" : "FAILED: " + stats.failure()) + "\n" + table;
	}

	private String ringTable() {
		Map<Integer, Map<String, Double>> spread = this.cluster.spread();
		String[] header = new String[spread.size() + 1];
		header[0] = "NODE";
		int column = 1;
		for (int from : spread.keySet()) {
			header[column++] = "FROM=" + from;
		}
		TextTable table = new TextTable(header);
		for (var node : this.topology.nodes()) {
			Object[] row = new Object[header.length];
			row[0] = node.id();
			column = 1;
			for (Map<String, Double> shares : spread.values()) {
				row[column++] = percent(shares.get(node.id()));
			}
			table.row(row);
		}
		return "node " + this.topology.self().id() + ": placement " + strategy() + "; share of "
				+ ClusterView.SAMPLE_KEYS + " sample keys whose replica set includes the node\n" + table;
	}

	private String hintsTable() {
		List<Map<String, @Nullable Object>> nodes = this.cluster.nodes();
		TextTable table = new TextTable("PEER", "STATE", "PENDING");
		nodes.stream()
			.filter((node) -> !(Boolean) node.get("self"))
			.forEach((node) -> table.row(node.get("url"), node.get("state"), node.get("pendingHints")));
		Map<String, Object> totals = hints(nodes);
		return "node " + this.topology.self().id() + ": hints pending " + totals.get("pending")
				+ "; since start stored " + totals.get("stored") + ", delivered " + totals.get("delivered")
				+ ", dropped " + totals.get("dropped") + "\n" + table;
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
		return "node " + this.topology.self().id() + ": backend " + stats.backend() + ", "
				+ (stats.healthy() ? "healthy" : "FAILED: " + stats.failure()) + "\n" + table;
	}

	private static @Nullable String percent(@Nullable Double share) {
		return (share != null) ? String.format(Locale.ROOT, "%.1f%%", share * 100) : null;
	}

}
