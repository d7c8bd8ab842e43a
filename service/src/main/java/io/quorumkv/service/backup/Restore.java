package io.quorumkv.service.backup;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.replication.Replicas;
import io.quorumkv.service.replication.ReplicationService;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Throttle;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Restores a snapshot set (one snapshot folder per node of the old cluster, or one node's
 * folder) into the running cluster this node belongs to, as of a time {@code T}: every
 * folder is verified first (a damaged file stops the restore before anything is written,
 * naming the file), then the tables of all the nodes are merged by key, and for every key
 * the newest version with a timestamp {@code <= T} ({@link EntryOrder}, so tombstones and
 * expiries included) is written through the cluster's write path with its own timestamp
 * ({@link ReplicationService#write(Entry, Replicas)}), to a quorum of its replicas under
 * the cluster's current ring, at most {@code rate} entries a second. The target may have
 * any size, replication factor, placement or backend.
 *
 * <p>
 * A restore as of a time older than the tombstone grace period is refused unless asked
 * for: a delete newer than the snapshot may have been purged from the cluster already, so
 * the restore would bring its key back. Writing an old version changes nothing on a
 * replica that holds a newer one, so a restore into a cluster that kept writing keeps the
 * newer writes.
 */
public final class Restore {

	/** Writes in flight at once. */
	static final int CONCURRENCY = 64;

	private static final Log logger = LogFactory.getLog(Restore.class);

	private final ReplicationService replication;

	private final HybridLogicalClock clock;

	private final Duration grace;

	/** The last restore this node coordinated (or coordinates); null before the first. */
	private volatile @Nullable RestoreProgress progress;

	public Restore(ReplicationService replication, HybridLogicalClock clock, Duration grace) {
		this.replication = replication;
		this.clock = clock;
		this.grace = grace;
	}

	/**
	 * What a restore did.
	 *
	 * @param asOf the time restored
	 * @param nodes the snapshot folders read
	 * @param keys distinct keys read
	 * @param written versions written (tombstones included)
	 * @param tombstones tombstones among them
	 * @param newerOnly keys whose every version in the set is newer than {@code asOf}
	 * (nothing written for them)
	 * @param durationMs how long it took
	 */
	public record Report(long asOf, List<String> nodes, long keys, long written, long tombstones, long newerOnly,
			long durationMs) {
	}

	/**
	 * The operator's request.
	 *
	 * @param from the snapshot set's folder, on this node's file system
	 * @param asOf the time to restore, null for the snapshots' own
	 * @param rate the most entries a second, null for no limit
	 * @param allowOlderThanGrace restores a time older than the tombstone grace
	 */
	public record Request(Path from, @Nullable Long asOf, @Nullable Long rate, boolean allowOlderThanGrace) {
	}

	/** The last restore this node coordinated, or runs now; null before the first. */
	public @Nullable RestoreProgress progress() {
		return this.progress;
	}

	/** Runs the restore; fails with {@link SnapshotException} when it is refused. */
	public Mono<Report> run(Request request) {
		return Mono.fromCallable(() -> plan(request)).subscribeOn(Schedulers.boundedElastic()).flatMap(this::write);
	}

	private record Plan(List<Path> folders, long asOf, @Nullable Long rate) {
	}

	private Plan plan(Request request) {
		List<Path> folders = folders(request.from());
		long snapshotTime = Long.MAX_VALUE;
		long latest = Long.MIN_VALUE;
		for (Path folder : folders) {
			SnapshotManifest manifest = SnapshotVerifier.checkFiles(folder);
			snapshotTime = Math.min(snapshotTime, manifest.asOf());
			latest = Math.max(latest, manifest.asOf());
		}
		if (request.asOf() == null && snapshotTime != latest) {
			throw new SnapshotException("the snapshots in " + request.from() + " were asked at different times ("
					+ snapshotTime + " to " + latest + "): give the time to restore (--as-of)");
		}
		long asOf = (request.asOf() != null) ? request.asOf() : snapshotTime;
		if (asOf > snapshotTime) {
			throw new SnapshotException("--as-of " + asOf + " is after the snapshot's time " + snapshotTime
					+ ": the snapshot does not hold every write up to it");
		}
		long graceMicros = this.grace.toNanos() / 1_000;
		long now = this.clock.wallMicros();
		if (!request.allowOlderThanGrace() && asOf < now - graceMicros) {
			throw new SnapshotException("refused: the time to restore, " + asOf + ", is older than the tombstone grace "
					+ "period (" + this.grace + "); a delete made since may already be purged from the cluster, "
					+ "and the restore would bring its key back. Restore into an empty cluster, or pass "
					+ "--allow-older-than-grace if that is what you want");
		}
		return new Plan(folders, asOf, request.rate());
	}

	/** {@code from} itself when it is a snapshot folder, else its snapshot folders. */
	static List<Path> folders(Path from) {
		if (!Files.isDirectory(from)) {
			throw new SnapshotException(from + " is not a folder");
		}
		if (Files.exists(from.resolve(SnapshotManifest.FILE_NAME))) {
			return List.of(from);
		}
		List<Path> folders = new ArrayList<>();
		try (Stream<Path> children = Files.list(from)) {
			for (Path child : children.sorted().toList()) {
				if (Files.isDirectory(child) && !child.getFileName().toString().startsWith(".")) {
					if (!Files.exists(child.resolve(SnapshotManifest.FILE_NAME))) {
						throw new SnapshotException(child + " has no " + SnapshotManifest.FILE_NAME
								+ ": a snapshot that never finished, or not a snapshot");
					}
					folders.add(child);
				}
			}
		}
		catch (java.io.IOException ex) {
			throw new SnapshotException("cannot list " + from + ": " + ex.getMessage(), ex);
		}
		if (folders.isEmpty()) {
			throw new SnapshotException(from + " holds no snapshot folder");
		}
		return folders;
	}

	private Mono<Report> write(Plan plan) {
		RestoreProgress progress = new RestoreProgress(plan.folders().stream().map(Path::toString).toList(),
				plan.asOf());
		this.progress = progress;
		AtomicLong keys = progress.keys;
		AtomicLong newerOnly = progress.newerOnly;
		AtomicLong written = progress.written;
		AtomicLong tombstones = progress.tombstones;
		Replicas replicas = Replicas.quorum(this.replication.replicationFactor());
		Flux<Entry> entries = Flux.using(() -> open(plan.folders()), (readers) -> {
			List<Iterator<Entry>> tables = new ArrayList<>();
			readers.forEach((reader) -> tables.addAll(reader.tables()));
			VersionMerge merge = new VersionMerge(tables);
			return Flux.fromIterable(() -> merge).<Entry>handle((versions, sink) -> {
				keys.incrementAndGet();
				Entry kept = asOf(versions, plan.asOf());
				if (kept == null) {
					newerOnly.incrementAndGet();
				}
				else {
					sink.next(kept);
				}
			});
		}, (readers) -> readers.forEach(SnapshotSource::close)).subscribeOn(Schedulers.boundedElastic());
		Throttle throttle = new Throttle((plan.rate() != null) ? plan.rate() : Throttle.UNLIMITED);
		logger.info("Restoring " + plan.folders() + " as of " + plan.asOf() + " with " + replicas + " acknowledgements"
				+ ((plan.rate() != null) ? ", at most " + plan.rate() + " entries a second" : ""));
		return throttle.pace(entries)
			.flatMap((entry) -> this.replication.write(entry, replicas)
				.retryWhen(Retry.backoff(5, Duration.ofMillis(100)))
				.doOnSuccess((done) -> {
					written.incrementAndGet();
					if (entry.isTombstone()) {
						tombstones.incrementAndGet();
					}
				}), CONCURRENCY)
			.then(Mono.fromSupplier(() -> {
				progress.done();
				Report report = new Report(plan.asOf(), plan.folders().stream().map(Path::toString).toList(),
						keys.get(), written.get(), tombstones.get(), newerOnly.get(), progress.elapsedMs());
				logger.info("Restore done: " + report);
				return report;
			}))
			.doOnError(progress::failed)
			.doOnCancel(() -> progress.failed(new IllegalStateException("cancelled")));
	}

	/**
	 * The key's state as of {@code time}: the greatest of its versions
	 * ({@link EntryOrder}) with a timestamp {@code <= time}; null when every version is
	 * newer.
	 */
	static @Nullable Entry asOf(List<Entry> versions, long time) {
		Entry kept = null;
		for (Entry version : versions) {
			if (version.timestamp() <= time) {
				kept = EntryOrder.max(kept, version);
			}
		}
		return kept;
	}

	private static List<SnapshotSource> open(List<Path> folders) {
		List<SnapshotSource> readers = new ArrayList<>();
		try {
			for (Path folder : folders) {
				readers.add(SnapshotVerifier.open(folder, SnapshotManifest.read(folder)));
			}
		}
		catch (RuntimeException ex) {
			readers.forEach(SnapshotSource::close);
			throw ex;
		}
		return readers;
	}

}
