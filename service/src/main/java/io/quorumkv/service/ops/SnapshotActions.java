package io.quorumkv.service.ops;

import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import io.quorumkv.service.backup.NodeSnapshots;
import io.quorumkv.service.backup.Restore;
import io.quorumkv.service.backup.SnapshotException;
import io.quorumkv.service.backup.SnapshotManifest;
import io.quorumkv.service.backup.SnapshotVerifier;
import io.quorumkv.service.cluster.HybridLogicalClock;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The backup actions of {@link QuorumKvEndpoint}: snapshot, list, clear, verify and
 * restore, each answered as JSON with the node's URL; a refusal is {@code {"node": …,
 * "error": reason}} with 400 (bad request), 409 (a name taken, a damaged or refused
 * snapshot) or 501 (a backend without snapshots).
 */
final class SnapshotActions {

	private final NodeSnapshots snapshots;

	private final Restore restore;

	private final HybridLogicalClock clock;

	private final String self;

	SnapshotActions(NodeSnapshots snapshots, Restore restore, HybridLogicalClock clock, String self) {
		this.snapshots = snapshots;
		this.restore = restore;
		this.clock = clock;
		this.self = self;
	}

	/**
	 * Holds every version of the storage for snapshot {@code name} and answers this
	 * node's clock read after the hold began: the largest of the nodes' answers is the
	 * snapshot's time {@code T} (docs/backup.md, "What T guarantees").
	 */
	Mono<WebEndpointResponse<Map<String, @Nullable Object>>> hold(String name) {
		return this.snapshots.hold(name).map((limit) -> {
			Map<String, @Nullable Object> done = body();
			done.put("action", "hold-snapshot");
			done.put("name", name);
			done.put("clock", this.clock.now());
			done.put("limitMs", limit.toMillis());
			return new WebEndpointResponse<>(done, 200);
		}).onErrorResume(this::refused);
	}

	/**
	 * Takes a snapshot as of {@code asOf}, or as of now when null. The clock moves past
	 * {@code asOf} first: a write this node stamps from then on is after the snapshot's
	 * time.
	 */
	Mono<WebEndpointResponse<Map<String, @Nullable Object>>> take(String name, @Nullable Long asOf) {
		return Mono.defer(() -> {
			if (asOf != null) {
				// Refused only beyond the allowed skew, as a replica refuses such a
				// write.
				this.clock.observe(asOf);
			}
			long time = (asOf != null) ? asOf : this.clock.now();
			long start = System.nanoTime();
			// An operator who gives up waiting does not cancel the snapshot halfway.
			return Mono.fromFuture(this.snapshots.take(name, time).toFuture(), true).map((manifest) -> {
				Map<String, @Nullable Object> done = body();
				done.put("action", "snapshot");
				done.put("name", name);
				done.put("asOf", manifest.asOf());
				done.put("files", manifest.files().size());
				done.put("bytes", manifest.bytes());
				done.put("folder", this.snapshots.root().resolve(name).toAbsolutePath().toString());
				done.put("ringNodes", ringNodes(manifest));
				done.put("durationMs", (System.nanoTime() - start) / 1_000_000);
				return new WebEndpointResponse<>(done, 200);
			});
		}).onErrorResume(this::refused);
	}

	Mono<WebEndpointResponse<Map<String, @Nullable Object>>> clear(String name) {
		return this.snapshots.clear(name).map((existed) -> {
			Map<String, @Nullable Object> done = body();
			done.put("action", "clear-snapshot");
			done.put("name", name);
			done.put("cleared", existed);
			return new WebEndpointResponse<>(done, 200);
		}).onErrorResume(this::refused);
	}

	Mono<WebEndpointResponse<Map<String, @Nullable Object>>> clearBackups(String name) {
		return this.snapshots.clearBackups(name).map((cleared) -> {
			Map<String, @Nullable Object> done = body();
			done.put("action", "clear-backups");
			done.put("name", name);
			done.put("base", cleared.base());
			done.put("removed", cleared.removed());
			done.put("kept", cleared.kept());
			done.put("walRemoved", cleared.walRemoved());
			done.put("walKept", cleared.walKept());
			return new WebEndpointResponse<>(done, 200);
		}).onErrorResume(this::refused);
	}

	Mono<WebEndpointResponse<Map<String, @Nullable Object>>> verify(String path) {
		return Mono.fromCallable(() -> {
			SnapshotVerifier.Report report = SnapshotVerifier.verify(Path.of(path));
			SnapshotManifest manifest = report.manifest();
			Map<String, @Nullable Object> done = body();
			done.put("action", "verify-snapshot");
			done.put("path", path);
			done.put("name", manifest.name());
			done.put("snapshotNode", manifest.node());
			done.put("asOf", manifest.asOf());
			done.put("files", manifest.files().size());
			done.put("bytes", manifest.bytes());
			done.put("keys", report.keys());
			done.put("versions", report.versions());
			done.put("tombstones", report.tombstones());
			done.put("expiring", report.expiring());
			done.put("minTimestamp", report.minTimestamp());
			done.put("maxTimestamp", report.maxTimestamp());
			done.put("incrementalTables", report.incrementalTables());
			done.put("reach", report.reach());
			done.put("gap", report.gap());
			done.put("walSegments", report.walSegments());
			done.put("walRecords", report.walRecords());
			done.put("walGap", report.walGap());
			return new WebEndpointResponse<>(done, 200);
		}).subscribeOn(Schedulers.boundedElastic()).onErrorResume(this::refused);
	}

	Mono<WebEndpointResponse<Map<String, @Nullable Object>>> restore(String path, @Nullable Long asOf,
			@Nullable Long rate, boolean allowOlderThanGrace) {
		if (rate != null && rate < 1) {
			return refused(new IllegalArgumentException("rate must be at least 1 entry a second"));
		}
		return this.restore.run(new Restore.Request(Path.of(path), asOf, rate, allowOlderThanGrace)).map((report) -> {
			Map<String, @Nullable Object> done = body();
			done.put("action", "restore");
			done.put("asOf", report.asOf());
			done.put("snapshots", report.nodes());
			done.put("keys", report.keys());
			done.put("written", report.written());
			done.put("tombstones", report.tombstones());
			done.put("newerOnly", report.newerOnly());
			done.put("durationMs", report.durationMs());
			return new WebEndpointResponse<>(done, 200);
		}).onErrorResume(this::refused).onErrorResume((ex) -> {
			// A write the cluster did not take after its retries, or no ring yet.
			Map<String, @Nullable Object> body = body();
			body.put("error", "restore failed: " + ex);
			return Mono.just(new WebEndpointResponse<>(body, 503));
		});
	}

	/** The snapshots of this node as a table. */
	Mono<String> table() {
		return this.snapshots.list().map((all) -> {
			TextTable table = new TextTable("NAME", "AS-OF", "FILES", "BYTES", "CREATED");
			long total = 0;
			for (SnapshotManifest manifest : all) {
				table.row(manifest.name(), manifest.asOf(), manifest.files().size(), manifest.bytes(),
						Instant.ofEpochMilli(manifest.createdAt()));
				total += manifest.bytes();
			}
			return "node " + this.self + ": " + all.size() + " snapshots, " + total + " bytes in "
					+ this.snapshots.root().toAbsolutePath() + " (hard links: bytes shared with the live tables)\n"
					+ table;
		});
	}

	private static int ringNodes(SnapshotManifest manifest) {
		return (manifest.ring() != null) ? manifest.ring().path("nodes").size() : 0;
	}

	private Map<String, @Nullable Object> body() {
		Map<String, @Nullable Object> body = new LinkedHashMap<>();
		body.put("node", this.self);
		return body;
	}

	private Mono<WebEndpointResponse<Map<String, @Nullable Object>>> refused(Throwable ex) {
		int status;
		if (ex instanceof NodeSnapshots.UnsupportedSnapshotException) {
			status = 501;
		}
		else if (ex instanceof SnapshotException) {
			status = 409;
		}
		else if (ex instanceof IllegalArgumentException) {
			status = 400;
		}
		else {
			return Mono.error(ex);
		}
		Map<String, @Nullable Object> body = body();
		body.put("error", ex.getMessage());
		return Mono.just(new WebEndpointResponse<>(body, status));
	}

}
