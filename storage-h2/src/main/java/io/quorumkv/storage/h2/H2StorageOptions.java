package io.quorumkv.storage.h2;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The validated configuration of an {@link H2Storage}. The service binds it from
 * {@code quorumkv.storage.h2.*} (the fields in kebab case: {@code pool-max-size},
 * {@code sync-interval}, ...) and the node's data folder.
 *
 * <pre>{@code
 * H2Storage storage = H2Storage.open(H2StorageOptions.defaults(dataDir).withPool(2, 8));
 * }</pre>
 *
 * @param directory the folder holding the database file {@code quorumkv.mv.db}; created
 * when missing
 * @param poolInitialSize connections opened at start (0..poolMaxSize)
 * @param poolMaxSize the most connections, and so the most statements running at once
 * @param maxPendingAcquires callers that may wait for a connection; one more is refused
 * with {@code StorageOverloadedException}
 * @param acquireTimeout the longest wait for a connection before
 * {@code StorageOverloadedException}
 * @param durability when an acknowledged upsert reaches the disk
 * @param syncInterval the period of the background fsync ({@code WRITE_EACH_COMMIT},
 * {@code PERIODIC_SYNC}) and H2's write delay ({@code PERIODIC_SYNC},
 * {@code WRITE_DELAY})
 * @param scanPageSize rows fetched per query of a scan (keyset pagination); a scan holds
 * at most about two pages in memory
 * @param lockTimeout how long a statement waits for a row lock held by another one
 * @param cacheSizeMb H2's page cache in MiB
 * @param maxUpsertRetries how often an upsert is retried after a duplicate-key or lock
 * conflict with a concurrent upsert of the same key
 */
public record H2StorageOptions(Path directory, int poolInitialSize, int poolMaxSize, int maxPendingAcquires,
		Duration acquireTimeout, H2Durability durability, Duration syncInterval, int scanPageSize, Duration lockTimeout,
		int cacheSizeMb, int maxUpsertRetries) {

	public H2StorageOptions {
		Objects.requireNonNull(directory, "directory");
		Objects.requireNonNull(acquireTimeout, "acquireTimeout");
		Objects.requireNonNull(durability, "durability");
		Objects.requireNonNull(syncInterval, "syncInterval");
		Objects.requireNonNull(lockTimeout, "lockTimeout");
		require(poolMaxSize >= 1 && poolMaxSize <= 1024, "poolMaxSize must be 1..1024: " + poolMaxSize);
		require(poolInitialSize >= 0 && poolInitialSize <= poolMaxSize,
				"poolInitialSize must be 0..poolMaxSize: " + poolInitialSize);
		require(maxPendingAcquires >= 0, "maxPendingAcquires must be >= 0: " + maxPendingAcquires);
		require(positive(acquireTimeout), "acquireTimeout must be positive: " + acquireTimeout);
		require(positive(syncInterval) && syncInterval.toMillis() <= 60_000,
				"syncInterval must be 1 ms..60 s: " + syncInterval);
		require(scanPageSize >= 1 && scanPageSize <= 100_000, "scanPageSize must be 1..100000: " + scanPageSize);
		require(positive(lockTimeout), "lockTimeout must be positive: " + lockTimeout);
		require(cacheSizeMb >= 1, "cacheSizeMb must be >= 1: " + cacheSizeMb);
		require(maxUpsertRetries >= 0, "maxUpsertRetries must be >= 0: " + maxUpsertRetries);
	}

	/**
	 * Defaults: a pool of 2..8 connections, 256 waiters, 5 s acquire timeout,
	 * {@link H2Durability#WRITE_EACH_COMMIT} (nothing acknowledged lost to a process
	 * crash) with an fsync every 100 ms, scan pages of 256 rows, 10 s lock timeout, 64
	 * MiB cache, 16 upsert retries.
	 */
	public static H2StorageOptions defaults(Path directory) {
		return new H2StorageOptions(directory, 2, 8, 256, Duration.ofSeconds(5), H2Durability.WRITE_EACH_COMMIT,
				Duration.ofMillis(100), 256, Duration.ofSeconds(10), 64, 16);
	}

	public H2StorageOptions withPool(int initialSize, int maxSize) {
		return new H2StorageOptions(this.directory, initialSize, maxSize, this.maxPendingAcquires, this.acquireTimeout,
				this.durability, this.syncInterval, this.scanPageSize, this.lockTimeout, this.cacheSizeMb,
				this.maxUpsertRetries);
	}

	public H2StorageOptions withPending(int maxPendingAcquires, Duration acquireTimeout) {
		return new H2StorageOptions(this.directory, this.poolInitialSize, this.poolMaxSize, maxPendingAcquires,
				acquireTimeout, this.durability, this.syncInterval, this.scanPageSize, this.lockTimeout,
				this.cacheSizeMb, this.maxUpsertRetries);
	}

	public H2StorageOptions withDurability(H2Durability durability, Duration syncInterval) {
		return new H2StorageOptions(this.directory, this.poolInitialSize, this.poolMaxSize, this.maxPendingAcquires,
				this.acquireTimeout, durability, syncInterval, this.scanPageSize, this.lockTimeout, this.cacheSizeMb,
				this.maxUpsertRetries);
	}

	public H2StorageOptions withScanPageSize(int scanPageSize) {
		return new H2StorageOptions(this.directory, this.poolInitialSize, this.poolMaxSize, this.maxPendingAcquires,
				this.acquireTimeout, this.durability, this.syncInterval, scanPageSize, this.lockTimeout,
				this.cacheSizeMb, this.maxUpsertRetries);
	}

	/** The database file name prefix inside {@link #directory()}. */
	static final String DATABASE_NAME = "quorumkv";

	Path databasePath() {
		return this.directory.toAbsolutePath().resolve(DATABASE_NAME);
	}

	private static boolean positive(Duration duration) {
		return !duration.isNegative() && !duration.isZero();
	}

	private static void require(boolean condition, String message) {
		if (!condition) {
			throw new IllegalArgumentException(message);
		}
	}

}
