package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Snapshots;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.Throttle;
import io.quorumkv.storage.StorageStats;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The log-structured merge-tree backend: a write-ahead log with group commit, concurrent
 * memtables, immutable memory-mapped SSTables with bloom filters, and leveled compaction
 * in the background (see {@code docs/storage-lsm.md}).
 *
 * <pre>{@code
 * try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(Path.of("data")))) {
 *     storage.upsert(Entry.value(key, value, clock.now())).block();
 *     Entry kept = storage.get(key).block();
 * }
 * }</pre>
 *
 * Upserts append to the WAL and insert into the memtable on the caller's thread (a write
 * to the operating system's page cache); they never wait for {@code fsync} on the
 * caller's thread: with {@link FsyncPolicy#ALWAYS} the returned {@code Mono} completes on
 * the WAL syncer thread. Lookups and scans read memory-mapped tables on the subscriber's
 * thread.
 */
public final class LsmStorage implements Storage, Snapshots {

	/**
	 * The folder, in a snapshot's files, of the WAL segments it linked
	 * ({@link #snapshot}).
	 */
	public static final String WAL_SEGMENTS = LsmSnapshot.WAL_FOLDER;

	private final LsmEngine engine;

	private LsmStorage(LsmEngine engine) {
		this.engine = engine;
	}

	/**
	 * Opens (creating when empty) the store in {@code options.directory()}, replaying its
	 * write-ahead log.
	 * @throws io.quorumkv.storage.CorruptedStorageException when a file is damaged
	 * @throws StorageException when the folder cannot be used or is open elsewhere
	 */
	public static LsmStorage open(LsmOptions options) {
		return open(options, Clock.systemUTC());
	}

	/**
	 * Opens the store judging expiry and the tombstone grace by {@code clock} (tests give
	 * a clock they move; a node gives its own).
	 */
	public static LsmStorage open(LsmOptions options, Clock clock) {
		return open(options, FileIo.real(), clock);
	}

	/**
	 * Opens the store with every file operation going through {@code io}: for tests,
	 * which put a fault-injecting file layer under the engine.
	 */
	static LsmStorage open(LsmOptions options, FileIo io) {
		return open(options, io, Clock.systemUTC());
	}

	/**
	 * Opens the store purging tombstones by {@code purgePolicy} from its first compaction
	 * on (the one recovery may start at once), not by the grace period alone until a
	 * policy is set: for an owner that sets its rule only later, and must not lose a
	 * tombstone meanwhile ({@link PurgePolicy#KEEP_ALL} until then).
	 */
	public static LsmStorage open(LsmOptions options, Clock clock, PurgePolicy purgePolicy) {
		Objects.requireNonNull(purgePolicy, "purgePolicy");
		return open(options, FileIo.real(), clock, purgePolicy);
	}

	static LsmStorage open(LsmOptions options, FileIo io, Clock clock) {
		return open(options, io, clock, PurgePolicy.ANY);
	}

	/**
	 * Opens the store with every file operation going through {@code io}, judging expiry
	 * by {@code clock} and purging tombstones by {@code purgePolicy}: for tests that put
	 * a fault-injecting file layer under a whole node's storage. Everything else opens
	 * through {@link FileIo#real()}.
	 */
	public static LsmStorage open(LsmOptions options, FileIo io, Clock clock, PurgePolicy purgePolicy) {
		Objects.requireNonNull(options, "options");
		Objects.requireNonNull(io, "io");
		Objects.requireNonNull(clock, "clock");
		Objects.requireNonNull(purgePolicy, "purgePolicy");
		try {
			return new LsmStorage(Recovery.open(options, io, clock, purgePolicy));
		}
		catch (IOException ex) {
			throw new StorageException("could not open LSM storage in " + options.directory(), ex);
		}
	}

	@Override
	public Mono<Entry> get(byte[] key) {
		Objects.requireNonNull(key, "key");
		return Mono.defer(() -> {
			this.engine.checkOpen();
			this.engine.stats.gets.increment();
			return Mono.justOrEmpty(this.engine.reads.get(key));
		});
	}

	@Override
	public Mono<Void> upsert(Entry entry) {
		Objects.requireNonNull(entry, "entry");
		return this.engine.upsert(entry);
	}

	/** All of {@code entries} in one WAL write, then into the memtable. */
	@Override
	public Mono<Void> upsertAll(List<Entry> entries) {
		Objects.requireNonNull(entries, "entries");
		List<Entry> copy = List.copyOf(entries);
		return this.engine.upsertAll(copy);
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
		return scan(fromInclusive, toExclusive, (key) -> true);
	}

	/** Filters in every table before a rejected entry's value is copied. */
	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive, Predicate<byte[]> keys) {
		Objects.requireNonNull(fromInclusive, "fromInclusive");
		Objects.requireNonNull(keys, "keys");
		return Flux.defer(() -> {
			this.engine.checkOpen();
			this.engine.stats.scans.increment();
			return this.engine.reads.scan(fromInclusive, toExclusive, keys);
		});
	}

	/**
	 * Forces every live WAL segment. Once the storage failed (a failed write or
	 * {@code fsync} of its files, final until a restart), fails with
	 * {@link LsmFailedException}: a force after a failed one proves nothing.
	 */
	@Override
	public Mono<Void> flush() {
		return this.engine.flush();
	}

	/**
	 * Applied by every compaction from now on, in addition to the grace period and the
	 * older-version probe ({@link #purgeTombstones()} stays the default: compactions
	 * purge, {@link #compact()} runs one over everything).
	 */
	@Override
	public void purgePolicy(PurgePolicy policy) {
		this.engine.purgePolicy = Objects.requireNonNull(policy, "policy");
	}

	@Override
	public StorageStats stats() {
		return this.engine.stats();
	}

	@Override
	public void close() {
		this.engine.close();
	}

	/** Test hook: freezes the active memtable and waits for all flushes. */
	CompletableFuture<Void> forceFlush() {
		this.engine.checkOpen();
		return this.engine.background.forceFlush();
	}

	/** Test hook: runs {@code task} on the compaction thread, delaying compactions. */
	void onCompactionThread(Runnable task) {
		this.engine.background.onCompactionThread(task);
	}

	/**
	 * Writes the memtables out, then compacts every table into the deepest level (an
	 * operator's request; it purges every tombstone that may be purged).
	 */
	@Override
	public Mono<Void> compact() {
		// An operator who gives up waiting does not cancel the compaction.
		return Mono.fromFuture(() -> forceFlush().thenCompose((flushed) -> forceCompaction()), true);
	}

	/**
	 * Freezes and flushes the memtables, then compacts every table into the deepest level
	 * leaving out the rejected keys: they are gone from every table at once, without a
	 * tombstone. The compaction thread merges at most {@code entriesPerSecond} entries a
	 * second; the other compactions wait for it (flushes do not), and once level 0 has
	 * reached its compaction trigger it goes at full speed until level 0 is back under,
	 * so that the writers do not stall behind it.
	 */
	@Override
	public Mono<Long> retain(java.util.function.Predicate<byte[]> keep, long entriesPerSecond) {
		Throttle throttle = new Throttle(entriesPerSecond);
		return Mono.fromFuture(() -> {
			this.engine.checkOpen();
			return this.engine.background.forceFlush()
				.thenCompose(
						(flushed) -> this.engine.background.forceFullCompaction((key) -> !keep.test(key), throttle));
		}, true);
	}

	/**
	 * Hard-links the WAL segments of the unflushed memtables into {@code target/wal/},
	 * flushes the memtables, then hard-links the live tables and the manifest into
	 * {@code target} ({@link LsmSnapshot}); the links are made off the caller's thread.
	 * The segments keep the versions a memtable overwrote: a restore as of a time before
	 * the freeze finds them ({@link #WAL_SEGMENTS}).
	 */
	@Override
	public Mono<List<String>> snapshot(Path target) {
		Objects.requireNonNull(target, "target");
		// Its own hold, from the segments' links to the tables': a compaction in between
		// would merge away a version the links of the segments do not have.
		return Mono.using(this::hold,
				(hold) -> Mono.fromCallable(() -> LsmSnapshot.linkSegments(this.engine, target))
					.subscribeOn(Schedulers.boundedElastic())
					.flatMap((segments) -> Mono.fromFuture(() -> LsmSnapshot.flushed(this.engine), true)
						.publishOn(Schedulers.boundedElastic())
						.then(Mono.fromCallable(() -> {
							List<String> names = new ArrayList<>(LsmSnapshot.link(this.engine, target));
							names.addAll(segments);
							return names;
						}))),
				Snapshots.Hold::close);
	}

	/**
	 * Keeps the WAL segments of the memtables flushed from now on, and holds back
	 * compactions that merge tables, until closed ({@link VersionHolds}).
	 */
	@Override
	public Snapshots.Hold hold() {
		this.engine.checkOpen();
		return this.engine.holds.open();
	}

	@Override
	public String snapshotFormat() {
		return LsmSnapshotReader.FORMAT;
	}

	/** Test hook: compacts every table into the deepest level. */
	CompletableFuture<Void> forceCompaction() {
		this.engine.checkOpen();
		return this.engine.background.forceFullCompaction();
	}

}
