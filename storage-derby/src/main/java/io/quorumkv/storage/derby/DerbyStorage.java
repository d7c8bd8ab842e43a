package io.quorumkv.storage.derby;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Expiry;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Snapshots;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageClosedException;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.StorageStats;
import io.quorumkv.storage.Throttle;
import io.quorumkv.storage.derby.DerbyStorageOptions.Durability;
import io.quorumkv.storage.derby.ScanPage.Bound;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Derby backend: an embedded database in {@code
 *
<dir>
 * /derby}, a bounded HikariCP pool, and a bounded executor of its own on which every JDBC
 * call runs.
 *
 * <pre>{@code
 * try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(dir))) {
 *     storage.upsert(Entry.value(key, value, ts)).then(storage.get(key)).block();
 * }
 * }</pre>
 *
 * Calls fail with {@link io.quorumkv.storage.StorageOverloadedException} when the
 * executor's queue or the pool is exhausted, with
 * {@link io.quorumkv.storage.StorageException} on database errors, and with
 * {@link IllegalArgumentException} for a key longer than 1024 bytes. Each row keeps its
 * expiry ({@link EntryTable}); reads judge it by the storage's clock and answer an
 * expired row as the tombstone of its timestamp.
 */
public final class DerbyStorage implements Storage, Snapshots {

	static final String BACKEND = "derby";

	private static final System.Logger LOG = System.getLogger(DerbyStorage.class.getName());

	/** Upsert attempts before a lock conflict is reported (deadlock, timeout, race). */
	static final int MAX_ATTEMPTS = 10;

	private final DerbyStorageOptions options;

	private final DerbyDatabase database;

	private final HikariDataSource pool;

	private final JdbcExecutor jdbc;

	private final AtomicBoolean closed = new AtomicBoolean();

	private final Clock clock;

	private final LongAdder gets = new LongAdder();

	private final LongAdder upserts = new LongAdder();

	private final LongAdder scans = new LongAdder();

	private final LongAdder retries = new LongAdder();

	private final LongAdder reconnects = new LongAdder();

	private final LongAdder tombstonesPurged = new LongAdder();

	private volatile PurgePolicy purgePolicy = PurgePolicy.KEEP_ALL;

	private DerbyStorage(DerbyStorageOptions options, DerbyDatabase database, HikariDataSource pool, Clock clock) {
		this.options = options;
		this.clock = clock;
		this.database = database;
		this.pool = pool;
		this.jdbc = new JdbcExecutor(options.poolSize(), options.maxQueuedTasks());
	}

	/** Opens (creating when absent) the store in {@code options.dir()}. */
	public static DerbyStorage open(DerbyStorageOptions options) {
		return open(options, Clock.systemUTC());
	}

	/**
	 * Opens the store judging expiry by {@code clock} (tests give a clock they move; a
	 * node gives its own).
	 */
	public static DerbyStorage open(DerbyStorageOptions options, Clock clock) {
		Objects.requireNonNull(options, "options");
		Objects.requireNonNull(clock, "clock");
		DerbyDatabase database = DerbyDatabase.boot(options);
		try {
			return new DerbyStorage(options, database, DerbyPool.create(options, database.url()), clock);
		}
		catch (RuntimeException ex) {
			database.shutdown();
			throw ex;
		}
	}

	@Override
	public Mono<Entry> get(byte[] key) {
		Objects.requireNonNull(key, "key");
		byte[] copy = key.clone();
		return work(this.gets, (connection) -> {
			long now = Expiry.nowMicros(this.clock);
			Entry kept = EntryTable.get(connection, copy);
			return (kept != null) ? kept.asSeenAt(now) : null;
		});
	}

	@Override
	public Mono<Void> upsert(Entry entry) {
		Objects.requireNonNull(entry, "entry");
		if (entry.key().length > EntryTable.MAX_KEY_BYTES) {
			return Mono.error(new IllegalArgumentException(
					"key is " + entry.key().length + " bytes, longer than " + EntryTable.MAX_KEY_BYTES));
		}
		return this.<Void>work(this.upserts, (connection) -> {
			for (int attempt = 1;; attempt++) {
				try {
					EntryTable.upsertOnce(connection, entry);
					return null;
				}
				catch (SQLException ex) {
					rollBackAfter(connection, ex, attempt);
					if (!SqlFailures.isRetryable(ex) || attempt == MAX_ATTEMPTS) {
						throw SqlFailures.toStorageException("upsert after " + attempt + " attempts", ex);
					}
					this.retries.increment();
				}
			}
		});
	}

	/**
	 * Rolls back after a failed upsert attempt. When the rollback fails too, reports the
	 * attempt's own failure with the rollback's attached: a connection that the failure
	 * closed answers 08003 to the rollback, which alone would hide the cause.
	 */
	private static void rollBackAfter(Connection connection, SQLException failure, int attempt) {
		try {
			connection.rollback();
		}
		catch (SQLException rollbackFailure) {
			failure.addSuppressed(rollbackFailure);
			throw SqlFailures.toStorageException("upsert (and roll back) after " + attempt + " attempts", failure);
		}
	}

	/**
	 * Scans every row and deletes the rejected ones that still hold the version scanned,
	 * a page at a time on the JDBC executor (each page one transaction).
	 */
	@Override
	public Mono<Long> retain(java.util.function.Predicate<byte[]> keep, long entriesPerSecond) {
		Throttle throttle = new Throttle(entriesPerSecond);
		return throttle.pace(scan(new byte[0], null))
			.filter((entry) -> !keep.test(entry.key()))
			.buffer(256)
			.concatMap((page) -> this.<Long>work((connection) -> EntryTable.deleteSeen(connection, page)))
			.reduce(0L, Long::sum);
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
		Objects.requireNonNull(fromInclusive, "fromInclusive");
		Bound from = Bound.lower(fromInclusive.clone());
		Bound to = Bound.upper((toExclusive != null) ? toExclusive.clone() : null);
		// Demand-driven: concatMapIterable asks for one page at a time, and expand reads
		// the next page only once the previous one was emitted, so the page being emitted
		// and one read ahead are in memory whatever the range.
		return Flux.defer(() -> {
			this.scans.increment();
			long now = Expiry.nowMicros(this.clock);
			return page(from, to).expand((page) -> (page.next() != null) ? page(page.next(), to) : Mono.empty())
				.concatMapIterable(ScanPage::entries, 1)
				.map((entry) -> entry.asSeenAt(now));
		});
	}

	private Mono<ScanPage> page(Bound from, @Nullable Bound to) {
		return work((connection) -> ScanPage.read(connection, from, to, this.options.scanBatchSize()));
	}

	@Override
	public Mono<Void> flush() {
		return this.<Void>work((connection) -> {
			EntryTable.checkpoint(connection);
			if (this.options.durability() == Durability.NO_SYNC) {
				this.database.forceFiles();
			}
			return null;
		});
	}

	/** The format name of a Derby snapshot ({@link #snapshotFormat()}). */
	public static final String SNAPSHOT_FORMAT = DerbySnapshots.FORMAT;

	/**
	 * Derby's own online backup, {@code SYSCS_UTIL.SYSCS_BACKUP_DATABASE}, into
	 * {@code target} ({@link DerbySnapshots}), on the JDBC executor. Read it back with
	 * {@link #openSnapshot}.
	 */
	@Override
	public Mono<List<String>> snapshot(Path target) {
		Objects.requireNonNull(target, "target");
		return this.<List<String>>work((connection) -> {
			try {
				return DerbySnapshots.backup(connection, target);
			}
			catch (IOException ex) {
				throw new StorageException("could not list the Derby backup in " + target, ex);
			}
		});
	}

	@Override
	public String snapshotFormat() {
		return SNAPSHOT_FORMAT;
	}

	/**
	 * Copies the snapshot {@link #snapshot} wrote into {@code snapshot} into
	 * {@code workDir}, an empty folder, and opens that copy as a store: how a snapshot is
	 * read back. The snapshot's own files are not changed.
	 */
	public static DerbyStorage openSnapshot(Path snapshot, Path workDir, Clock clock) throws IOException {
		DerbyStorageOptions options = DerbyStorageOptions.defaults(workDir);
		DerbySnapshots.copy(snapshot, options);
		return open(options, clock);
	}

	@Override
	public void purgePolicy(PurgePolicy policy) {
		this.purgePolicy = Objects.requireNonNull(policy, "policy");
	}

	/**
	 * One pass over the tombstones, a page of {@code scan-batch-size} at a time, each
	 * page one task and one transaction ({@link PurgePage}); a page that meets a deadlock
	 * or lock timeout is rolled back and run again.
	 */
	@Override
	public Mono<Long> purgeTombstones() {
		return Mono.defer(() -> {
			PurgePolicy policy = this.purgePolicy;
			return purgePage(null, policy)
				.expand((page) -> (page.next() != null) ? purgePage(page.next(), policy) : Mono.empty())
				.map(PurgePage::purged)
				.reduce(0L, Long::sum)
				.doOnNext(this.tombstonesPurged::add);
		});
	}

	private Mono<PurgePage> purgePage(byte @Nullable [] after, PurgePolicy policy) {
		return this.<PurgePage>work((connection) -> {
			for (int attempt = 1;; attempt++) {
				try {
					return PurgePage.run(connection, after, this.options.scanBatchSize(), policy,
							Expiry.nowMicros(this.clock));
				}
				catch (SQLException ex) {
					connection.rollback();
					if (!SqlFailures.isRetryable(ex) || attempt == MAX_ATTEMPTS) {
						throw SqlFailures.toStorageException("purge after " + attempt + " attempts", ex);
					}
					this.retries.increment();
				}
			}
		});
	}

	@Override
	public int maxKeySize() {
		return EntryTable.MAX_KEY_BYTES;
	}

	@Override
	public StorageStats stats() {
		HikariPoolMXBean bean = this.pool.getHikariPoolMXBean();
		boolean up = bean != null && !this.closed.get();
		return new StorageStats(BACKEND,
				Map.of("gets", this.gets.sum(), "upserts", this.upserts.sum(), "scans", this.scans.sum(), "retries",
						this.retries.sum(), "reconnects", this.reconnects.sum(), "tombstones.purged",
						this.tombstonesPurged.sum()),
				Map.of("pool.active", up ? (long) bean.getActiveConnections() : 0L, "pool.idle",
						up ? (long) bean.getIdleConnections() : 0L, "pool.pending",
						up ? (long) bean.getThreadsAwaitingConnection() : 0L, "executor.queued",
						(long) this.jdbc.queued(), "executor.active", (long) this.jdbc.active()),
				null);
	}

	/**
	 * Idempotent: stops taking work, lets running tasks finish, closes the pool and shuts
	 * the database down (a checkpoint; with {@code NO_SYNC} the files are then forced).
	 */
	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		try {
			this.jdbc.shutdown();
			this.pool.close();
		}
		finally {
			this.database.shutdown();
		}
	}

	/** Test hook: runs on the JDBC thread before each task. */
	JdbcExecutor executor() {
		return this.jdbc;
	}

	/**
	 * Runs {@code work} with a pooled connection on the JDBC executor; the connection is
	 * returned on every outcome, and a transaction left open is rolled back by the pool.
	 */
	private <T> Mono<T> work(SqlWork<T> work) {
		return work(null, work);
	}

	/**
	 * As above, counting the task once in {@code counter} when it starts, however often
	 * {@link #withConnection} runs it.
	 */
	<T> Mono<T> work(@Nullable LongAdder counter, SqlWork<T> work) {
		return Mono.defer(() -> {
			if (this.closed.get()) {
				return Mono.error(new StorageClosedException(BACKEND));
			}
			return this.jdbc.call(() -> {
				if (counter != null) {
					counter.increment();
				}
				return withConnection(work);
			});
		});
	}

	/**
	 * Runs {@code work} on a pooled connection, and once more on another when the first
	 * turned out closed (SQLState class 08; HikariCP evicts it). Every task is
	 * idempotent: reads, checkpoints, and upserts that keep the greater version. A rare
	 * CI failure showed a pooled connection answering "No current connection" to an
	 * upsert's rollback; the warning logs what closed it.
	 */
	<T> @Nullable T withConnection(SqlWork<T> work) throws SQLException {
		try (Connection connection = this.pool.getConnection()) {
			return work.run(connection);
		}
		catch (SQLException | StorageException ex) {
			if (!SqlFailures.isConnectionLost(ex)) {
				throw ex;
			}
			this.reconnects.increment();
			LOG.log(System.Logger.Level.WARNING, "a pooled derby connection was closed under a task;"
					+ " running the task once more on another connection", ex);
			try (Connection connection = this.pool.getConnection()) {
				return work.run(connection);
			}
		}
	}

	@FunctionalInterface
	interface SqlWork<T> {

		@Nullable T run(Connection connection) throws SQLException;

	}

}
