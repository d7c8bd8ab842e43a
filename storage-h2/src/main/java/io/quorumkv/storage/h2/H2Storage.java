package io.quorumkv.storage.h2;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Expiry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Snapshots;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageClosedException;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.StorageOverloadedException;
import io.quorumkv.storage.StorageStats;
import io.quorumkv.storage.Throttle;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.Readable;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

import org.springframework.r2dbc.core.DatabaseClient;

/**
 * The H2 backend: one table in an H2 file database ({@code <directory>/quorumkv.mv.db}),
 * reached through Spring's {@link DatabaseClient} over a bounded r2dbc-pool.
 *
 * <pre>{@code
 * try (H2Storage storage = H2Storage.open(H2StorageOptions.defaults(dataDir))) {
 *     storage.upsert(Entry.value(key, value, ts)).then(storage.get(key)).block();
 * }
 * }</pre>
 *
 * r2dbc-h2 runs H2 embedded, so every statement blocks the thread it runs on: all work is
 * subscribed on a bounded, never-interrupting thread pool of this storage, never on the
 * caller's thread, and results are emitted there. Overload (pool and its waiters full,
 * acquire timeout, the scheduler's queue full) fails fast with
 * {@code StorageOverloadedException}.
 *
 * <p>
 * Each row keeps its expiry ({@link H2Schema}); reads judge it by the storage's clock and
 * answer an expired row as the tombstone of its timestamp.
 */
public final class H2Storage implements Storage, Snapshots {

	private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(60);

	private final H2StorageOptions options;

	private final H2Connections connections;

	private final DatabaseClient client;

	private final H2Metrics metrics = new H2Metrics();

	private final Clock clock;

	private final AtomicBoolean closed = new AtomicBoolean();

	/** Upserts completed; compared with {@link #syncedWrites} by the periodic sync. */
	private final AtomicLong completedWrites = new AtomicLong();

	private final AtomicLong syncedWrites = new AtomicLong();

	private volatile PurgePolicy purgePolicy = PurgePolicy.KEEP_ALL;

	/** The format name of an H2 snapshot ({@link #snapshotFormat()}). */
	public static final String SNAPSHOT_FORMAT = H2Snapshots.FORMAT;

	private final LongAdder snapshots = new LongAdder();

	private final LongAdder snapshotFailures = new LongAdder();

	/** The first failed sync: writes and flushes are refused from then on. */
	private final AtomicReference<@Nullable StorageException> syncFailed = new AtomicReference<>();

	/** Held by a running periodic sync and by {@link #close()}. */
	private final ReentrantLock syncLock = new ReentrantLock();

	private H2Storage(H2StorageOptions options, H2Connections connections, Clock clock) {
		this.options = options;
		this.clock = clock;
		this.connections = connections;
		this.client = DatabaseClient.create(connections.pool());
		if (options.durability().syncsPeriodically()) {
			startPeriodicSync();
		}
	}

	/** Opens (or creates) the database in {@code options.directory()}. */
	public static H2Storage open(H2StorageOptions options) {
		return open(options, Clock.systemUTC());
	}

	/**
	 * Opens (or creates) the database, judging expiry by {@code clock} (tests give a
	 * clock they move; a node gives its own).
	 */
	public static H2Storage open(H2StorageOptions options, Clock clock) {
		Objects.requireNonNull(options, "options");
		Objects.requireNonNull(clock, "clock");
		H2Connections connections = H2Connections.open(options);
		try {
			DatabaseClient schema = DatabaseClient.create(connections.pool());
			schema.sql(H2Schema.CREATE_TABLE)
				.then()
				.then(schema.sql(H2Schema.ADD_EXPIRY).then())
				.subscribeOn(connections.scheduler())
				.block(CLOSE_TIMEOUT);
		}
		catch (RuntimeException ex) {
			connections.close();
			throw H2Errors.translate("open of " + options.databasePath(), ex, false);
		}
		return new H2Storage(options, connections, clock);
	}

	@Override
	public Mono<Entry> get(byte[] key) {
		Objects.requireNonNull(key, "key");
		byte[] k = key.clone();
		return guard("get", this.metrics.gets, this.metrics.getFailures, Mono.defer(() -> {
			long now = Expiry.nowMicros(this.clock);
			return this.client.sql(H2Schema.SELECT_ONE).bind(0, k).map((row) -> toEntry(row).asSeenAt(now)).one();
		}));
	}

	@Override
	public Mono<Void> upsert(Entry entry) {
		Objects.requireNonNull(entry, "entry");
		Mono<Void> merge = Mono.defer(
				() -> bindValue(this.client.sql(H2Schema.UPSERT).bind(0, entry.key()), entry).bind(2, entry.timestamp())
					.bind(3, entry.expiresAt())
					.fetch()
					.rowsUpdated()
					.then());
		return upserts(1, merge);
	}

	/**
	 * Keeps the entries in one transaction, one statement with a binding per entry: one
	 * commit for the list where {@link #upsert} pays one per entry (and, when every write
	 * is synced, one sync). The rows are merged in key order, so two lists that share
	 * keys cannot deadlock on each other; a conflict rolls the whole list back and runs
	 * it again, as it does for one entry.
	 */
	@Override
	public Mono<Void> upsertAll(List<Entry> entries) {
		List<Entry> sorted = new ArrayList<>(entries);
		sorted.forEach((entry) -> Objects.requireNonNull(entry, "entry"));
		if (sorted.isEmpty()) {
			return Mono.empty();
		}
		// Stable: entries of one key keep their list order, which does not matter either
		// (each is compared with the row the one before left).
		sorted.sort(Comparator.comparing(Entry::key, Keys.ORDER));
		// The statement and the commit are built once the step before them ended,
		// whatever the driver does eagerly; a retry takes another connection and
		// starts over. A list cancelled inside its transaction (its caller gave up)
		// leaves nothing behind: r2dbc-pool rolls back a connection released while
		// in a transaction.
		Mono<Void> merge = this.client.inConnection((connection) -> Mono.from(connection.beginTransaction())
			.thenMany(Flux.defer(() -> upsertStatement(connection, sorted).execute()))
			.concatMap(Result::getRowsUpdated)
			.then(Mono.defer(() -> Mono.from(connection.commitTransaction())))
			.onErrorResume((ex) -> Mono.from(connection.rollbackTransaction()).onErrorComplete().then(Mono.error(ex))));
		return upserts(sorted.size(), merge);
	}

	private static Statement upsertStatement(Connection connection, List<Entry> entries) {
		Statement statement = connection.createStatement(H2Schema.UPSERT);
		for (int i = 0; i < entries.size(); i++) {
			if (i > 0) {
				statement.add();
			}
			Entry entry = entries.get(i);
			statement.bind(0, entry.key());
			if (entry.value() != null) {
				statement.bind(1, entry.value());
			}
			else {
				statement.bindNull(1, byte[].class);
			}
			statement.bind(2, entry.timestamp());
			statement.bind(3, entry.expiresAt());
		}
		return statement;
	}

	/**
	 * {@code merge} run again after a conflict: two concurrent inserts of a new key fail
	 * one with a duplicate key, which then finds the row.
	 */
	private Mono<Void> retried(Mono<Void> merge) {
		return merge.retryWhen(Retry.max(this.options.maxUpsertRetries())
			.filter(H2Errors::isRetryableConflict)
			.doBeforeRetry((signal) -> this.metrics.upsertRetries.increment()));
	}

	/** Counts {@code writes} completed, and syncs them when every write is synced. */
	private Mono<Void> durable(Mono<Void> merge, int writes) {
		Mono<Void> counted = merge.doOnSuccess((ignored) -> this.completedWrites.addAndGet(writes));
		return (this.options.durability() == H2Durability.SYNC_EACH_WRITE) ? counted.then(checkpointSync()) : counted;
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
		Objects.requireNonNull(fromInclusive, "fromInclusive");
		byte[] from = fromInclusive.clone();
		byte[] to = (toExclusive != null) ? toExclusive.clone() : null;
		return Flux.defer(() -> {
			if (this.closed.get()) {
				return Flux.error(new StorageClosedException(H2Errors.BACKEND));
			}
			this.metrics.scans.increment();
			if (to != null && Keys.compare(from, to) >= 0) {
				return Flux.<Entry>empty();
			}
			long now = Expiry.nowMicros(this.clock);
			return new H2Scan(this::fetchPage, this.options.scanPageSize(), from, to).entries()
				.map((entry) -> entry.asSeenAt(now));
		}).onErrorMap((ex) -> {
			this.metrics.scanFailures.increment();
			StorageException translated = H2Errors.translate("scan", ex, this.closed.get());
			if (translated instanceof StorageOverloadedException) {
				this.metrics.overloads.increment();
			}
			return translated;
		});
	}

	/**
	 * Scans every row and deletes each rejected one that still holds the version scanned,
	 * a few at a time; a checkpoint then makes the deletions durable.
	 */
	@Override
	public Mono<Long> retain(java.util.function.Predicate<byte[]> keep, long entriesPerSecond) {
		Throttle throttle = new Throttle(entriesPerSecond);
		return throttle.pace(scan(new byte[0], null))
			.filter((entry) -> !keep.test(entry.key()))
			.flatMap((entry) -> this.client.sql(H2Schema.DELETE_SEEN)
				.bind(0, entry.key())
				.bind(1, entry.timestamp())
				.fetch()
				.rowsUpdated(), 4)
			.reduce(0L, Long::sum)
			.flatMap((removed) -> checkpointSync().thenReturn(removed))
			.onErrorMap((ex) -> H2Errors.translate("retain", ex, this.closed.get()));
	}

	@Override
	public Mono<Void> flush() {
		return guard("flush", this.metrics.flushes, this.metrics.flushFailures, checkpointSync());
	}

	@Override
	public void purgePolicy(PurgePolicy policy) {
		this.purgePolicy = Objects.requireNonNull(policy, "policy");
	}

	/**
	 * One pass over the tombstones, a page at a time ({@code scan-page-size} keys), each
	 * page's allowed ones deleted in one transaction ({@link H2Purge}); a conflict with a
	 * concurrent upsert runs the pass again (deletes that already committed stay done).
	 */
	@Override
	public Mono<Long> purgeTombstones() {
		Mono<Long> pass = Mono.defer(() -> new H2Purge(this.client, this.connections.scheduler(),
				this.options.scanPageSize(), this.purgePolicy, Expiry.nowMicros(this.clock))
			.run());
		return guard("purge", this.metrics.purges, this.metrics.purgeFailures,
				pass.retryWhen(Retry.max(this.options.maxUpsertRetries()).filter(H2Errors::isRetryableConflict))
					.doOnNext(this.metrics.tombstonesPurged::add));
	}

	@Override
	public int maxKeySize() {
		return H2Schema.MAX_KEY_BYTES;
	}

	@Override
	public StorageStats stats() {
		return this.metrics.snapshot(this.connections.pool());
	}

	/**
	 * Stops the periodic sync and waits for a running one, shuts the database down (H2's
	 * background writer stopped first, then {@code CHECKPOINT SYNC} and {@code SHUTDOWN}:
	 * everything written is synced and the file released), then disposes the pool.
	 * Idempotent.
	 */
	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		this.connections.threads().stopTimer();
		this.syncLock.lock();
		try {
			this.connections.shutdownDatabase(CLOSE_TIMEOUT);
		}
		finally {
			this.syncLock.unlock();
		}
	}

	/** The pool, for tests that hold connections. */
	ConnectionPool pool() {
		return this.connections.pool();
	}

	private Mono<List<Entry>> fetchPage(String sql, byte[] position, int pageSize, byte @Nullable [] end) {
		DatabaseClient.GenericExecuteSpec spec = this.client.sql(sql).bind(0, position).bind(1, pageSize);
		if (end != null) {
			spec = spec.bind(2, end);
		}
		this.metrics.scanPages.increment();
		return spec.map(H2Storage::toEntry)
			.all()
			.collectList()
			.doOnNext((page) -> this.metrics.scanRows.add(page.size()))
			.subscribeOn(this.connections.scheduler());
	}

	/**
	 * H2's own online backup, {@code BACKUP TO}, into {@code target}
	 * ({@link H2Snapshots}): a consistent copy of the database file taken while reads and
	 * writes go on. Read it back with {@link #openSnapshot}.
	 */
	@Override
	public Mono<List<String>> snapshot(Path target) {
		Objects.requireNonNull(target, "target");
		return guard("snapshot", this.snapshots, this.snapshotFailures, H2Snapshots.backup(this.client, target));
	}

	@Override
	public String snapshotFormat() {
		return SNAPSHOT_FORMAT;
	}

	/**
	 * Unzips the snapshot {@link #snapshot} wrote into {@code snapshot} into
	 * {@code workDir}, an empty folder, and opens that copy as a store: how a snapshot is
	 * read back. The snapshot's own file is not changed.
	 */
	public static H2Storage openSnapshot(Path snapshot, Path workDir, Clock clock) throws IOException {
		H2Snapshots.unzip(snapshot, workDir);
		return open(H2StorageOptions.defaults(workDir), clock);
	}

	private Mono<Void> checkpointSync() {
		return Mono.defer(() -> {
			StorageException failed = this.syncFailed.get();
			if (failed != null) {
				return Mono.error(refusal(failed));
			}
			long writes = this.completedWrites.get();
			return this.client.sql(H2Schema.CHECKPOINT_SYNC).then().doOnSuccess((ignored) -> {
				this.syncedWrites.accumulateAndGet(writes, Math::max);
				this.metrics.syncs.increment();
			}).doOnError(this::syncFailed);
		});
	}

	/**
	 * Keeps the first failure of a {@code CHECKPOINT SYNC} (a busy pool aside): H2 goes
	 * on after a failed fsync and its next one succeeds, but the pages the failed one
	 * could not write may be gone from the page cache, so no later sync proves them
	 * durable (docs/storage-h2.md, "A failed write or fsync"). From then on this storage
	 * refuses writes and flushes until the node restarts; reads go on.
	 */
	private void syncFailed(Throwable error) {
		if (this.closed.get()) {
			return;
		}
		StorageException failure = H2Errors.translate("sync", error, false);
		if (failure instanceof StorageOverloadedException) {
			return;
		}
		if (this.syncFailed.compareAndSet(null, failure)) {
			this.metrics.backgroundFailure.compareAndSet(null, failure.getMessage());
		}
	}

	private static StorageException refusal(StorageException failed) {
		return new StorageException(H2Errors.BACKEND + " refuses writes since a sync failed (" + failed.getMessage()
				+ "): a later sync cannot prove the earlier writes durable; restart the node", failed);
	}

	/** The refusal of every write after a failed sync, or {@code work}. */
	private <T> Mono<T> unlessSyncFailed(Mono<T> work) {
		return Mono.defer(() -> {
			StorageException failed = this.syncFailed.get();
			return (failed != null) ? Mono.error(refusal(failed)) : work;
		});
	}

	private void startPeriodicSync() {
		this.connections.threads().schedulePeriodically(this::syncIfDirty, this.options.syncInterval().toMillis());
	}

	/**
	 * One periodic {@code CHECKPOINT SYNC}, run blocking on a storage thread while
	 * holding {@link #syncLock}: {@link #close()} takes the lock, so {@code SHUTDOWN}
	 * never runs concurrently with a sync (a cancelled subscription would not stop the
	 * blocking statement).
	 */
	private void syncIfDirty() {
		if (this.closed.get() || this.completedWrites.get() == this.syncedWrites.get() || !this.syncLock.tryLock()) {
			return;
		}
		try {
			checkpointSync().block(CLOSE_TIMEOUT);
		}
		catch (RuntimeException ex) {
			StorageException failure = H2Errors.translate("periodic sync", ex, this.closed.get());
			// A busy pool only delays the sync to the next tick; anything else is sticky.
			if (!(failure instanceof StorageOverloadedException) && !this.closed.get()) {
				this.metrics.backgroundFailure.compareAndSet(null, failure.getMessage());
			}
		}
		finally {
			this.syncLock.unlock();
		}
	}

	private <T> Mono<T> guard(String operation, LongAdder calls, LongAdder failures, Mono<T> work) {
		return guard(operation, calls, 1, failures, work);
	}

	/**
	 * {@code merge} of {@code entries} entries, retried after a conflict, counted and
	 * synced as {@link #durable} says, guarded: the entries counted as upserts, a failed
	 * call once.
	 */
	private Mono<Void> upserts(int entries, Mono<Void> merge) {
		return guard("upsert", this.metrics.upserts, entries, this.metrics.upsertFailures,
				unlessSyncFailed(durable(retried(merge), entries)));
	}

	private <T> Mono<T> guard(String operation, LongAdder calls, int count, LongAdder failures, Mono<T> work) {
		return Mono.defer(() -> {
			if (this.closed.get()) {
				return Mono.<T>error(new StorageClosedException(H2Errors.BACKEND));
			}
			calls.add(count);
			return work.subscribeOn(this.connections.scheduler());
		}).onErrorMap((ex) -> {
			failures.increment();
			StorageException translated = H2Errors.translate(operation, ex, this.closed.get());
			if (translated instanceof StorageOverloadedException) {
				this.metrics.overloads.increment();
			}
			return translated;
		});
	}

	private static DatabaseClient.GenericExecuteSpec bindValue(DatabaseClient.GenericExecuteSpec spec, Entry entry) {
		byte[] value = entry.value();
		return (value != null) ? spec.bind(1, value) : spec.bindNull(1, byte[].class);
	}

	private static Entry toEntry(Readable row) {
		byte[] key = Objects.requireNonNull(row.get(0, byte[].class), "k");
		Long timestamp = Objects.requireNonNull(row.get(2, Long.class), "ts");
		Long expiresAt = Objects.requireNonNull(row.get(3, Long.class), "exp");
		return new Entry(key, row.get(1, byte[].class), timestamp, expiresAt);
	}

}
