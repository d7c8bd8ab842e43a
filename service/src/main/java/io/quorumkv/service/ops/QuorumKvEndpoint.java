package io.quorumkv.service.ops;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.backup.NodeSnapshots;
import io.quorumkv.service.backup.Restore;
import io.quorumkv.service.backup.RestoreProgress;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.membership.ForcedReconfiguration;
import io.quorumkv.service.membership.Membership;
import io.quorumkv.service.metadata.Liveness;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.repair.RepairService;
import io.quorumkv.service.replication.HintStore;
import io.quorumkv.storage.Storage;
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
 * storage, repair) for operators and the {@code scripts/qkv} tool, actions on the
 * storage, repair, and the membership changes: the node's one admin surface.
 *
 * <ul>
 * <li>{@code GET /actuator/quorumkv}: everything, as JSON;</li>
 * <li>{@code GET /actuator/quorumkv/{status|ring|hints|storage|membership|repair}}: one
 * part as an aligned plain-text table ({@code status} includes {@code membership});</li>
 * <li>{@code POST /actuator/quorumkv/flush}, {@code POST /actuator/quorumkv/compact}:
 * flushes or compacts the storage (and then drops the tombstones the node allows) and
 * answers once done;</li>
 * <li>{@code POST /actuator/quorumkv/repair}: repairs every key this node owns with all
 * its replicas and answers the report once done ({@code repair-primary}: only the keys
 * this node is the primary of); 409 while a repair of the node runs or while a membership
 * change is under way. {@code GET /actuator/quorumkv/repair}: each range's last
 * successful repair;</li>
 * <li>{@code POST /actuator/quorumkv/{join|decommission|remove}} with the JSON body
 * {@code {"url": …[, "epoch": n]}}, {@code POST /actuator/quorumkv/replace} with
 * {@code {"url": dead, "replacement": new[, "epoch": n]}}: has the change agreed (200),
 * or says why not (400, 409); this node then coordinates it to its end
 * (docs/membership.md);</li>
 * <li>{@code POST /actuator/quorumkv/cleanup}: removes the keys this node no longer
 * owns;</li>
 * <li>{@code POST /actuator/quorumkv/force-reconfigure} with {@code {"lost": "URL,URL"[,
 * "allowOlderRing": true]}}, on a surviving voter when a majority of the metadata group's
 * voters is lost for good: forms the next generation of the group from this node's ring,
 * the lost voters fenced ({@link ForcedReconfiguration}; 200, or 409 with the reason, a
 * newer ring on another member this node reaches among them unless
 * {@code allowOlderRing});</li>
 * <li>backups (docs/backup.md, {@link SnapshotActions}): {@code POST hold-snapshot} with
 * {@code {"name": …}} holds every version of the storage for that snapshot and answers
 * the node's clock, {@code POST snapshot} with {@code {"name": …[, "asOf": T]}} takes a
 * snapshot of this node's storage as of {@code T} (now when absent; the answer gives it)
 * and ends the hold of its name, {@code POST clear-snapshot} with {@code {"name": …}}
 * removes one, {@code POST clear-backups} with {@code {"name": …}} removes the
 * incremental tables that snapshot holds, {@code GET snapshots} lists them;
 * {@code POST verify-snapshot} with {@code {"path": …}} checks a snapshot folder on this
 * node's file system, and {@code POST restore} with {@code {"path": …[, "asOf": T][,
 * "rate": n][, "allowOlderThanGrace": true]}} writes a snapshot set into the cluster
 * through this node.</li>
 * </ul>
 * Like every actuator endpoint but health, metrics and prometheus, it is reachable over
 * HTTP only when listed in {@code management.endpoints.web.exposure.include}.
 */
@Component
@Endpoint(id = "quorumkv")
public class QuorumKvEndpoint {

	private static final Log logger = LogFactory.getLog(QuorumKvEndpoint.class);

	private final ClusterState state;

	private final Storage storage;

	private final ClusterView cluster;

	private final Membership membership;

	private final ForcedReconfiguration forced;

	private final RepairService repair;

	private final RepairView repairView;

	private final Restore restore;

	private final SnapshotActions snapshots;

	private final NodeTables tables;

	public QuorumKvEndpoint(ClusterState state, PeerClient peers, HintStore hints, Storage storage,
			Membership membership, RepairService repair, MeterRegistry meters, NodeSnapshots snapshots, Restore restore,
			HybridLogicalClock clock, Liveness liveness, ForcedReconfiguration forced) {
		this.state = state;
		this.forced = forced;
		this.snapshots = new SnapshotActions(snapshots, restore, clock, state.self().base());
		this.restore = restore;
		this.membership = membership;
		this.repair = repair;
		this.repairView = new RepairView(repair, state.self());
		this.storage = storage;
		this.cluster = new ClusterView(state, peers, hints, meters, liveness);
		this.tables = new NodeTables(state, storage, meters, this.cluster, restore);
	}

	@ReadOperation
	public Map<String, @Nullable Object> view() {
		List<Map<String, @Nullable Object>> nodes = this.cluster.nodes();
		Map<String, @Nullable Object> view = new LinkedHashMap<>();
		view.put("node", self());
		view.put("ring", this.state.ring().map((ring) -> RingJson.map(ring)).orElse(null));
		view.put("placement", this.cluster.ring(this.tables.strategy()));
		view.put("nodes", nodes);
		view.put("hints", this.tables.hints(nodes));
		view.put("storage", StorageView.of(this.storage.stats()));
		view.put("transfers", this.membership.transfers());
		view.put("repair", this.repairView.json());
		RestoreProgress restoring = this.restore.progress();
		view.put("restore", (restoring != null) ? restoring.json() : null);
		return view;
	}

	@ReadOperation(produces = "text/plain")
	public Mono<String> table(@Selector String section) {
		return switch (section) {
			case "status" ->
				this.membership.status().map((status) -> this.tables.status() + MembershipView.text(status));
			case "membership" -> this.membership.status().map(MembershipView::text);
			case "ring" -> Mono.fromSupplier(this.tables::ring);
			case "hints" -> Mono.fromSupplier(this.tables::hints);
			case "storage" -> Mono.fromSupplier(this.tables::storage);
			case "repair" -> Mono.fromSupplier(this.repairView::table);
			case "snapshots" -> this.snapshots.table();
			default -> throw new InvalidEndpointRequestException("unknown section " + section,
					"unknown section; one of status, membership, ring, hints, storage, repair, snapshots");
		};
	}

	/**
	 * An action: {@code flush} and {@code compact} of the storage, {@code repair} and
	 * {@code repair-primary}, or a membership change ({@code join}, {@code decommission},
	 * {@code remove}, {@code replace}) or {@code cleanup}.
	 * @param url the node a membership change is about (the dead node of a replace)
	 * @param replacement the new node of a replace
	 * @param epoch the epoch the operator saw; a change asked against another is refused
	 * @param name a snapshot's name (for {@code clear-backups}, the one whose incremental
	 * tables are removed)
	 * @param asOf the time of a snapshot or a restore (HLC microseconds)
	 * @param path a snapshot folder (verify) or snapshot set (restore) on this node
	 * @param rate the most entries a second a restore writes
	 * @param allowOlderThanGrace a restore of a time older than the tombstone grace
	 * @param lost the URLs, comma-separated, of the voters a forced reconfiguration
	 * declares lost for good
	 * @param allowOlderRing a forced reconfiguration even though another member this node
	 * reaches serves a newer ring (the changes after this node's epoch are lost)
	 */
	@WriteOperation
	public Mono<WebEndpointResponse<Map<String, @Nullable Object>>> run(@Selector String action, @Nullable String url,
			@Nullable String replacement, @Nullable Long epoch, @Nullable String name, @Nullable Long asOf,
			@Nullable String path, @Nullable Long rate, @Nullable Boolean allowOlderThanGrace, @Nullable String lost,
			@Nullable Boolean allowOlderRing) {
		return switch (action) {
			case "flush", "compact" -> storageAction(action);
			case "repair" -> repair(RepairService.Scope.ALL);
			case "repair-primary" -> repair(RepairService.Scope.PRIMARY);
			case "join" -> answer(this.membership.join(required(url, "url"), epoch));
			case "decommission" -> answer(this.membership.decommission(required(url, "url"), epoch));
			case "remove" -> answer(this.membership.remove(required(url, "url"), epoch));
			case "replace" ->
				answer(this.membership.replace(required(url, "url"), required(replacement, "replacement"), epoch));
			case "cleanup" -> answer(this.membership.cleanup());
			case "force-reconfigure" -> answer(this.forced.run(
					List.of(required(lost, "lost").split(",")).stream().filter((u) -> !u.isBlank()).toList(),
					Boolean.TRUE.equals(allowOlderRing)));
			case "hold-snapshot" -> this.snapshots.hold(required(name, "name"));
			case "snapshot" -> this.snapshots.take(required(name, "name"), asOf);
			case "clear-snapshot" -> this.snapshots.clear(required(name, "name"));
			case "clear-backups" -> this.snapshots.clearBackups(required(name, "name"));
			case "verify-snapshot" -> this.snapshots.verify(required(path, "path"));
			case "restore" ->
				this.snapshots.restore(required(path, "path"), asOf, rate, Boolean.TRUE.equals(allowOlderThanGrace));
			default -> throw new InvalidEndpointRequestException("unknown action " + action,
					"unknown action; one of flush, compact, repair, repair-primary, join, decommission, remove, replace, cleanup, force-reconfigure, hold-snapshot, snapshot, clear-snapshot, clear-backups, verify-snapshot, restore");
		};
	}

	private static String required(@Nullable String value, String name) {
		if (value == null || value.isBlank()) {
			throw new InvalidEndpointRequestException("missing " + name, "missing " + name);
		}
		return value;
	}

	private static Mono<WebEndpointResponse<Map<String, @Nullable Object>>> answer(Mono<Membership.Answer> answer) {
		return answer.map((done) -> new WebEndpointResponse<>(done.body(), done.status()));
	}

	private Mono<WebEndpointResponse<Map<String, @Nullable Object>>> storageAction(String action) {
		// A compaction is followed by a purge pass: the SQL backends drop the tombstones
		// the node allows there, the LSM did in its compaction.
		Mono<Long> work = action.equals("flush") ? this.storage.flush().thenReturn(-1L)
				: this.storage.compact().then(this.storage.purgeTombstones());
		return Mono.defer(() -> {
			long start = System.nanoTime();
			logger.info("Operator requested a storage " + action);
			return work.map((purged) -> {
				Map<String, @Nullable Object> done = new LinkedHashMap<>();
				done.put("node", self());
				done.put("action", action);
				done.put("durationMs", (System.nanoTime() - start) / 1_000_000);
				if (purged >= 0) {
					done.put("tombstonesPurged", purged);
				}
				return new WebEndpointResponse<>(done, 200);
			});
		});
	}

	private Mono<WebEndpointResponse<Map<String, @Nullable Object>>> repair(RepairService.Scope scope) {
		return this.repair.repair(scope).map((report) -> {
			Map<String, @Nullable Object> done = new LinkedHashMap<>();
			done.put("node", self());
			done.put("action", (scope == RepairService.Scope.ALL) ? "repair" : "repair-primary");
			done.putAll(RepairView.report(report));
			return new WebEndpointResponse<>(done, 200);
		}).onErrorResume(RepairService.RepairRefusedException.class, (refused) -> {
			Map<String, @Nullable Object> body = new LinkedHashMap<>();
			body.put("node", self());
			body.put("error", refused.getMessage());
			return Mono.just(new WebEndpointResponse<>(body, 409));
		});
	}

	private String self() {
		return this.state.self().base();
	}

}
