package io.quorumkv.service.backup;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.storage.Snapshots;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.lsm.IncrementalBackup;
import io.quorumkv.storage.lsm.io.FileIo;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A node's snapshots, in {@code <storage path>/snapshots/NAME/}: the storage's copy in
 * {@code data/} (the LSM's hard links) and {@link SnapshotManifest the manifest}
 * {@code snapshot.json}.
 *
 * <p>
 * A snapshot is made in {@code snapshots/.NAME.partial/}: the storage writes its files,
 * their checksums go into the manifest, which is forced, and the folder is renamed to
 * {@code NAME} and its parent forced. A crash at any point leaves the earlier snapshots
 * as they were and at most a {@code .partial} folder, which the next start removes and
 * reports ({@link #removedAtStart()}); a failed snapshot removes its own. A name is never
 * reused: a snapshot of an existing name is refused.
 */
public final class NodeSnapshots {

	/** The folder of the snapshots under the storage path. */
	public static final String FOLDER = "snapshots";

	static final String PARTIAL_SUFFIX = ".partial";

	/** How long a {@link #hold} waits for its snapshot before it closes itself. */
	public static final Duration HOLD_LIMIT = Duration.ofSeconds(60);

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

	private static final Log logger = LogFactory.getLog(NodeSnapshots.class);

	private final Path root;

	private final Storage storage;

	private final String backend;

	private final Node self;

	private final java.util.function.Supplier<@Nullable Ring> ring;

	private final List<String> removedAtStart;

	private final FileSums sums = new FileSums();

	private final FileIo io;

	private final Map<String, Held> holds = new ConcurrentHashMap<>();

	/**
	 * Removes (and logs) the {@code .partial} folders a crash left in {@code root}.
	 * @param root the snapshots folder, on the file system of the storage's folder
	 */
	public NodeSnapshots(Path root, Storage storage, String backend, Node self,
			java.util.function.Supplier<@Nullable Ring> ring) {
		this(root, storage, backend, self, ring, FileIo.real());
	}

	/**
	 * As above, writing the manifest and renaming the folder through {@code io} (the
	 * LSM's file layer: a test's models what a power cut keeps).
	 */
	public NodeSnapshots(Path root, Storage storage, String backend, Node self,
			java.util.function.Supplier<@Nullable Ring> ring, FileIo io) {
		this.io = io;
		this.root = root;
		this.storage = storage;
		this.backend = backend;
		this.self = self;
		this.ring = ring;
		this.removedAtStart = SnapshotFiles.removePartials(root);
	}

	/** The unfinished snapshots the start removed (their names). */
	public List<String> removedAtStart() {
		return this.removedAtStart;
	}

	/** The folder of the snapshots. */
	public Path root() {
		return this.root;
	}

	/**
	 * Opens the storage's hold of every version it has ({@link Snapshots#hold()}) for
	 * snapshot {@code name}, to be taken within {@link #HOLD_LIMIT}: {@link #take} of
	 * that name closes it when done, and it closes itself after the limit (an operator's
	 * {@code qkv snapshot} that died between the two). A hold of a name already held
	 * replaces it.
	 * @throws SnapshotException (as the error of the {@code Mono}) when the name is
	 * invalid or the backend has no snapshot
	 */
	public Mono<Duration> hold(String name) {
		return Mono.fromCallable(() -> {
			checkName(name);
			if (!(this.storage instanceof Snapshots snapshots)) {
				throw new UnsupportedSnapshotException(
						"the " + this.backend + " backend takes no online snapshot (docs/backup.md)");
			}
			Snapshots.Hold hold = snapshots.hold();
			// Closing the last hold deletes the WAL segments it kept: off the event
			// loops.
			Disposable expiry = Schedulers.boundedElastic()
				.schedule(() -> release(name, hold, "expired"), HOLD_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
			Held previous = this.holds.put(name, new Held(hold, expiry));
			if (previous != null) {
				previous.close();
			}
			return HOLD_LIMIT;
		}).subscribeOn(Schedulers.boundedElastic());
	}

	/** Closes the hold of {@code name} if it is still {@code hold}. */
	private void release(String name, Snapshots.@Nullable Hold hold, String why) {
		Held held = this.holds.get(name);
		if (held != null && (hold == null || held.hold() == hold) && this.holds.remove(name, held)) {
			held.close();
			if (why.equals("expired")) {
				logger.warn("The hold for snapshot " + name + " expired after " + HOLD_LIMIT.toSeconds()
						+ " s without that snapshot");
			}
		}
	}

	/** The holds open, by snapshot name. */
	public java.util.Set<String> held() {
		return java.util.Set.copyOf(this.holds.keySet());
	}

	/**
	 * Takes snapshot {@code name} as of {@code asOf} (the time the operator's request was
	 * stamped with, the same for every node) and completes with its manifest; closes the
	 * {@link #hold} of that name, if one is open, once done (taken or refused).
	 * @throws SnapshotException (as the error of the {@code Mono}) when the name is
	 * invalid or taken, or the backend has no snapshot
	 */
	public Mono<SnapshotManifest> take(String name, long asOf) {
		return Mono.defer(() -> {
			checkName(name);
			if (!(this.storage instanceof Snapshots snapshots)) {
				return Mono.error(new UnsupportedSnapshotException(
						"the " + this.backend + " backend takes no online snapshot (docs/backup.md)"));
			}
			Path done = this.root.resolve(name);
			Path partial = this.root.resolve("." + name + PARTIAL_SUFFIX);
			if (Files.exists(done) || Files.exists(partial)) {
				return Mono.error(new SnapshotConflictException("snapshot " + name + " exists on node " + this.self.id()
						+ "; clear it first (qkv clear-snapshot " + name + ")"));
			}
			Path data = partial.resolve(SnapshotManifest.DATA);
			long start = System.nanoTime();
			return Mono.fromCallable(() -> create(name, partial, data))
				.subscribeOn(Schedulers.boundedElastic())
				.then(snapshots.snapshot(data)
					.publishOn(Schedulers.boundedElastic())
					.map((files) -> finish(name, asOf, partial, done, files, snapshots.snapshotFormat()))
					.doOnSuccess((manifest) -> logger.info("Snapshot " + name + " as of " + asOf + " taken in "
							+ (System.nanoTime() - start) / 1_000_000 + " ms: " + manifest.files().size() + " files, "
							+ manifest.bytes() + " bytes in " + done))
					.onErrorResume((ex) -> Mono.fromRunnable(() -> SnapshotFiles.deleteTree(partial))
						.subscribeOn(Schedulers.boundedElastic())
						.then(Mono.error(ex))));
		})
			.subscribeOn(Schedulers.boundedElastic())
			.doOnTerminate(() -> release(name, null, "taken"))
			.doOnCancel(() -> release(name, null, "taken"));
	}

	/** Makes the partial folder, refusing a name another snapshot took meanwhile. */
	private Path create(String name, Path partial, Path data) throws IOException {
		Files.createDirectories(this.root);
		try {
			Files.createDirectory(partial);
		}
		catch (java.nio.file.FileAlreadyExistsException ex) {
			throw new SnapshotConflictException("snapshot " + name + " is being taken on node " + this.self.id());
		}
		return Files.createDirectory(data);
	}

	private SnapshotManifest finish(String name, long asOf, Path partial, Path done, List<String> files,
			String format) {
		try {
			List<String> paths = new ArrayList<>();
			for (String file : files) {
				paths.add(SnapshotManifest.DATA + "/" + file);
			}
			List<SnapshotManifest.FileEntry> entries = this.sums.entries(partial, paths);
			Ring ring = this.ring.get();
			JsonNode ringJson = (ring != null) ? JsonMapper.shared().readTree(RingJson.write(ring)) : null;
			SnapshotManifest manifest = new SnapshotManifest(name, this.self.id(), this.self.base(), this.backend,
					format, asOf, System.currentTimeMillis(), ringJson, entries);
			manifest.write(partial, this.io);
			this.io.syncDirectory(partial);
			this.io.rename(partial, done);
			this.io.syncDirectory(this.root);
			return manifest;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("snapshot " + name + " could not be finished", ex);
		}
	}

	/** The finished snapshots, by name. */
	public Mono<List<SnapshotManifest>> list() {
		return Mono.fromCallable(() -> {
			List<SnapshotManifest> all = new ArrayList<>();
			if (!Files.isDirectory(this.root)) {
				return all;
			}
			try (DirectoryStream<Path> folders = Files.newDirectoryStream(this.root)) {
				for (Path folder : folders) {
					if (!folder.getFileName().toString().startsWith(".") && Files.isDirectory(folder)) {
						try {
							all.add(SnapshotManifest.read(folder));
						}
						catch (SnapshotException ex) {
							logger.warn("Skipping " + folder + ": " + ex.getMessage());
						}
					}
				}
			}
			all.sort(Comparator.comparing(SnapshotManifest::name));
			return all;
		}).subscribeOn(Schedulers.boundedElastic());
	}

	/** Removes snapshot {@code name}; completes with whether it existed. */
	public Mono<Boolean> clear(String name) {
		return Mono.fromCallable(() -> {
			checkName(name);
			Path folder = this.root.resolve(name);
			if (!Files.isDirectory(folder)) {
				return false;
			}
			// Renamed out of the way first: a crash while deleting leaves a partial
			// folder.
			Path doomed = this.root.resolve("." + name + ".cleared" + PARTIAL_SUFFIX);
			Files.move(folder, doomed, StandardCopyOption.ATOMIC_MOVE);
			SnapshotFiles.deleteTree(doomed);
			logger.info("Snapshot " + name + " cleared from " + this.root);
			return true;
		}).subscribeOn(Schedulers.boundedElastic());
	}

	/**
	 * What {@link #clearBackups} did.
	 *
	 * @param base the newest flushed table the snapshot holds
	 * @param removed incremental tables removed (each with its record)
	 * @param kept incremental tables kept: flushed after the snapshot, or the newest one
	 * (which the node's next record names as the table flushed before it)
	 * @param walRemoved WAL segments removed: below the oldest one the snapshot's
	 * manifest needed
	 * @param walKept WAL segments kept
	 */
	public record ClearedBackups(long base, int removed, int kept, int walRemoved, int walKept) {
	}

	/**
	 * Removes from the LSM's {@code backups/} (in {@code data/} beside this folder) every
	 * incremental table snapshot {@code name} holds: those numbered up to its
	 * {@code BACKUP-BASE}, the newest table flushed before its links. The tables flushed
	 * after it stay: the snapshot plus them reach a later time; so does the newest table
	 * of all, the chain's last link, which a node starting again after a crash continues
	 * the chain from. The WAL segments below the oldest one the snapshot's manifest
	 * needed go too ({@link WalLinks#prune}).
	 * @throws SnapshotException (as the error of the {@code Mono}) when there is no such
	 * snapshot, or it was taken without incremental backups
	 */
	public Mono<ClearedBackups> clearBackups(String name) {
		return Mono.fromCallable(() -> {
			checkName(name);
			Path snapshot = this.root.resolve(name);
			if (!Files.isDirectory(snapshot)) {
				throw new SnapshotException("no snapshot " + name + " on node " + this.self.id());
			}
			java.util.OptionalLong base = IncrementalBackup.readBase(snapshot.resolve(SnapshotManifest.DATA));
			if (base.isEmpty()) {
				throw new SnapshotException("snapshot " + name + " on node " + this.self.id()
						+ " was taken without incremental backups on: it does not tell which incremental tables it holds");
			}
			Path folder = this.root.resolveSibling("data").resolve(IncrementalBackup.FOLDER);
			int removed = 0;
			int kept = 0;
			List<IncrementalBackup> records = IncrementalBackup.list(folder);
			// The newest record stays: a node that starts again after a crash continues
			// its chain from it (its next record names it as previous), so the chain
			// still meets the snapshot's base.
			long newest = records.isEmpty() ? -1 : records.getLast().number();
			for (IncrementalBackup record : records) {
				if (record.number() <= base.getAsLong() && record.number() != newest) {
					// The table first: a record left alone by a crash is removed (or its
					// table linked again) at the next start.
					Files.deleteIfExists(folder.resolve(record.table()));
					Files.deleteIfExists(folder.resolve(record.recordFile()));
					removed++;
				}
				else {
					kept++;
				}
			}
			WalLinks.Pruned wal = WalLinks.prune(folder, snapshot.resolve(SnapshotManifest.DATA));
			logger.info("Incremental backups up to table " + base.getAsLong() + " (in snapshot " + name
					+ ") cleared from " + folder + ": " + removed + " tables removed, " + kept + " kept; "
					+ wal.removed() + " WAL segments removed, " + wal.kept() + " kept");
			return new ClearedBackups(base.getAsLong(), removed, kept, wal.removed(), wal.kept());
		}).subscribeOn(Schedulers.boundedElastic());
	}

	static void checkName(String name) {
		if (!NAME.matcher(name).matches()) {
			throw new IllegalArgumentException(
					"a snapshot name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
		}
	}

	/** A backend without online snapshots (501). */
	public static final class UnsupportedSnapshotException extends SnapshotException {

		UnsupportedSnapshotException(String message) {
			super(message);
		}

	}

	/** A name already taken (409). */
	public static final class SnapshotConflictException extends SnapshotException {

		SnapshotConflictException(String message) {
			super(message);
		}

	}

	/** A hold and the task that closes it at the limit. */
	private record Held(Snapshots.Hold hold, Disposable expiry) {

		void close() {
			this.expiry.dispose();
			this.hold.close();
		}

	}

}
