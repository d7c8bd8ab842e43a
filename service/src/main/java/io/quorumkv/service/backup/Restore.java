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
 * any size, replication factor, placement or backend. An LSM node's folder may hold, in
 * {@code incremental/}, the tables its store flushed after the snapshot
 * ({@link Incrementals}); they are merged like the snapshot's, and a time up to where
 * every node's chain of them reaches may be restored. The WAL segments linked with them
 * ({@link WalLinks}) add the versions a memtable overwrote, so that a time between two
 * flushes restores exactly.
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

	/**
	 * A node's snapshot folder of a set, checked, with its incremental tables.
	 *
	 * @param folder the snapshot folder
	 * @param manifest its manifest
	 * @param incrementals the incremental tables chained to it
	 */
	record NodeFolder(Path folder, SnapshotManifest manifest, Incrementals incrementals) {
	}

	/**
	 * A set checked file by file, and the time to restore, within its reach.
	 *
	 * @param nodes the snapshot folders
	 * @param asOf the time to restore
	 */
	record CheckedSet(List<NodeFolder> nodes, long asOf) {
	}

	private record Plan(List<Path> folders, CheckedSet set, @Nullable Long rate) {
	}

	private Plan plan(Request request) {
		CheckedSet set = check(request.from(), request.asOf());
		long asOf = set.asOf();
		long graceMicros = this.grace.toNanos() / 1_000;
		long now = this.clock.wallMicros();
		if (!request.allowOlderThanGrace() && asOf < now - graceMicros) {
			throw new SnapshotException("refused: the time to restore, " + asOf + ", is older than the tombstone grace "
					+ "period (" + this.grace + "); a delete made since may already be purged from the cluster, "
					+ "and the restore would bring its key back. Restore into an empty cluster, or pass "
					+ "--allow-older-than-grace if that is what you want");
		}
		return new Plan(set.nodes().stream().map(NodeFolder::folder).toList(), set, request.rate());
	}

	/**
	 * Checks every file of the set {@code from} and the time to restore: the one asked,
	 * or the snapshots' own (they must agree then), at most the set's reach. The set
	 * reaches the snapshots' time, or beyond with incremental tables: as far as the node
	 * whose chain ends first, since a key's newest version may be on that node only.
	 * @throws SnapshotException naming the file at fault, or why the time is refused
	 */
	static CheckedSet check(Path from, @Nullable Long requested) {
		List<NodeFolder> nodes = new ArrayList<>();
		long snapshotTime = Long.MAX_VALUE;
		long latest = Long.MIN_VALUE;
		NodeFolder shortest = null;
		for (Path folder : folders(from)) {
			SnapshotManifest manifest = SnapshotVerifier.checkFiles(folder);
			NodeFolder node = new NodeFolder(folder, manifest, Incrementals.check(folder, manifest));
			nodes.add(node);
			snapshotTime = Math.min(snapshotTime, manifest.asOf());
			latest = Math.max(latest, manifest.asOf());
			if (shortest == null || node.incrementals().reach() < shortest.incrementals().reach()) {
				shortest = node;
			}
		}
		if (requested == null && snapshotTime != latest) {
			throw new SnapshotException("the snapshots in " + from + " were asked at different times (" + snapshotTime
					+ " to " + latest + "): give the time to restore (--as-of)");
		}
		long asOf = (requested != null) ? requested : snapshotTime;
		long reach = Math.max(snapshotTime, shortest.incrementals().reach());
		if (asOf > reach) {
			if (reach == snapshotTime) {
				throw new SnapshotException("--as-of " + asOf + " is after the snapshot's time " + snapshotTime
						+ ": the snapshot does not hold every write up to it"
						+ ((shortest.incrementals().gap() != null) ? " (" + shortest.incrementals().gap() + ")"
								: (nodes.size() > 1 && shortest.incrementals().tables().isEmpty())
										? " (" + shortest.folder() + " has no incremental table after it)" : ""));
			}
			throw new SnapshotException("--as-of " + asOf + " is after what the set reaches: it can restore up to "
					+ reach + ", where the incremental tables of " + shortest.folder() + " end"
					+ ((shortest.incrementals().gap() != null) ? " (" + shortest.incrementals().gap() + ")" : "")
					+ "; a write the node took after that is in none of its files");
		}
		return new CheckedSet(nodes, asOf);
	}

	/**
	 * The state of the checked set as of its time, key by key: the newest version at or
	 * before it, counted in {@code keys}, and {@code newerOnly} for a key with none.
	 */
	static Flux<Entry> entries(CheckedSet set, AtomicLong keys, AtomicLong newerOnly) {
		return Flux.using(() -> open(set.nodes()), (readers) -> {
			List<Iterator<Entry>> tables = new ArrayList<>();
			readers.forEach((reader) -> tables.addAll(reader.tables()));
			// The versions a memtable overwrote, from the WAL links: a time between two
			// flushes restores exactly.
			set.nodes().forEach((node) -> tables.add(node.incrementals().wal().asOf(set.asOf())));
			// And those the snapshot linked of the memtables it froze: a key overwritten
			// between the snapshot's time and the node's freeze restores as of that time.
			set.nodes().forEach((node) -> tables.add(WalLinks.frozen(node.folder()).asOf(set.asOf())));
			VersionMerge merge = new VersionMerge(tables);
			return Flux.fromIterable(() -> merge).<Entry>handle((versions, sink) -> {
				keys.incrementAndGet();
				Entry kept = asOf(versions, set.asOf());
				if (kept == null) {
					newerOnly.incrementAndGet();
				}
				else {
					sink.next(kept);
				}
			});
		}, (readers) -> readers.forEach(SnapshotSource::close)).subscribeOn(Schedulers.boundedElastic());
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
				plan.set().asOf());
		this.progress = progress;
		AtomicLong keys = progress.keys;
		AtomicLong newerOnly = progress.newerOnly;
		AtomicLong written = progress.written;
		AtomicLong tombstones = progress.tombstones;
		Replicas replicas = Replicas.quorum(this.replication.replicationFactor());
		Flux<Entry> entries = entries(plan.set(), keys, newerOnly);
		Throttle throttle = new Throttle((plan.rate() != null) ? plan.rate() : Throttle.UNLIMITED);
		for (NodeFolder node : plan.set().nodes()) {
			String gap = node.incrementals().wal().gap();
			if (gap != null) {
				logger.warn("Restoring " + node.folder() + " as of " + plan.set().asOf()
						+ " without the WAL segments after a gap, exact at its flushes only from there: " + gap);
			}
		}
		logger.info("Restoring " + plan.folders() + " as of " + plan.set().asOf() + " with " + replicas
				+ " acknowledgements"
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
				Report report = new Report(plan.set().asOf(), plan.folders().stream().map(Path::toString).toList(),
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

	private static List<SnapshotSource> open(List<NodeFolder> nodes) {
		List<SnapshotSource> readers = new ArrayList<>();
		try {
			for (NodeFolder node : nodes) {
				readers.add(SnapshotSource.open(node.folder(), node.manifest(), node.incrementals().tables()));
			}
		}
		catch (RuntimeException ex) {
			readers.forEach(SnapshotSource::close);
			throw ex;
		}
		return readers;
	}

}
