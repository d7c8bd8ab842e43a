package io.quorumkv.storage.derby;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link DerbyStorage}, validated at construction. The service binds them
 * from {@code quorumkv.storage.derby.*} (kebab case: {@code pool-size},
 * {@code max-queued-tasks}, {@code acquire-timeout}, {@code durability},
 * {@code page-cache-size}, {@code scan-batch-size}); {@code dir} comes from
 * {@code quorumkv.storage.path}.
 *
 * <pre>{@code
 * DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(dataDir));
 * }</pre>
 *
 * @param dir the node's data folder; the database lives in {@code dir/derby} and Derby's
 * log in {@code dir/derby.log}
 * @param poolSize JDBC connections, and threads of the executor that uses them (1..256)
 * @param maxQueuedTasks JDBC tasks that may wait for a thread before calls are refused
 * with {@link io.quorumkv.storage.StorageOverloadedException} (1..1,000,000)
 * @param acquireTimeout longest wait for a pooled connection (at least 250 ms, Hikari's
 * minimum)
 * @param durability whether a commit forces Derby's transaction log to disk
 * @param pageCacheSize pages in Derby's page cache ({@code derby.storage.pageCacheSize},
 * 40..1,000,000; pages are 4 KiB or 32 KiB)
 * @param scanBatchSize rows read per scan page, one short transaction each (1..10,000)
 */
public record DerbyStorageOptions(Path dir, int poolSize, int maxQueuedTasks, Duration acquireTimeout,
		Durability durability, int pageCacheSize, int scanBatchSize) {

	/** How a commit reaches the disk. */
	public enum Durability {

		/**
		 * Every commit forces the transaction log ({@code fsync}) before the write is
		 * acknowledged: nothing acknowledged is lost on a process, OS or power failure.
		 * Stronger (and slower) than an LSM that forces its WAL every 100 ms.
		 */
		SYNC_ON_COMMIT,

		/**
		 * Derby's {@code derby.system.durability=test}: commits write the log to the OS
		 * but never force it, and checkpoints do not force data files. Acknowledged
		 * writes survive a killed process; an OS crash or power loss may lose recent
		 * writes and can leave the database unrecoverable. {@link DerbyStorage#flush()}
		 * still forces every file of the database, so a completed flush is a durable
		 * point.
		 */
		NO_SYNC

	}

	public DerbyStorageOptions {
		Objects.requireNonNull(dir, "dir");
		Objects.requireNonNull(acquireTimeout, "acquireTimeout");
		Objects.requireNonNull(durability, "durability");
		dir = dir.toAbsolutePath().normalize();
		if (dir.toString().indexOf(';') >= 0) {
			throw new IllegalArgumentException("dir must not contain ';' (it is part of a JDBC URL): " + dir);
		}
		requireRange("poolSize", poolSize, 1, 256);
		requireRange("maxQueuedTasks", maxQueuedTasks, 1, 1_000_000);
		requireRange("pageCacheSize", pageCacheSize, 40, 1_000_000);
		requireRange("scanBatchSize", scanBatchSize, 1, 10_000);
		if (acquireTimeout.compareTo(Duration.ofMillis(250)) < 0) {
			throw new IllegalArgumentException("acquireTimeout must be at least 250ms, was " + acquireTimeout);
		}
	}

	/**
	 * Defaults: 8 connections, 1024 queued tasks, 5 s acquire timeout, sync on commit,
	 * 1000 cached pages (Derby's default), 500 rows per scan page.
	 */
	public static DerbyStorageOptions defaults(Path dir) {
		return new DerbyStorageOptions(dir, 8, 1024, Duration.ofSeconds(5), Durability.SYNC_ON_COMMIT, 1000, 500);
	}

	public DerbyStorageOptions withPoolSize(int poolSize) {
		return new DerbyStorageOptions(this.dir, poolSize, this.maxQueuedTasks, this.acquireTimeout, this.durability,
				this.pageCacheSize, this.scanBatchSize);
	}

	public DerbyStorageOptions withMaxQueuedTasks(int maxQueuedTasks) {
		return new DerbyStorageOptions(this.dir, this.poolSize, maxQueuedTasks, this.acquireTimeout, this.durability,
				this.pageCacheSize, this.scanBatchSize);
	}

	public DerbyStorageOptions withDurability(Durability durability) {
		return new DerbyStorageOptions(this.dir, this.poolSize, this.maxQueuedTasks, this.acquireTimeout, durability,
				this.pageCacheSize, this.scanBatchSize);
	}

	public DerbyStorageOptions withScanBatchSize(int scanBatchSize) {
		return new DerbyStorageOptions(this.dir, this.poolSize, this.maxQueuedTasks, this.acquireTimeout,
				this.durability, this.pageCacheSize, scanBatchSize);
	}

	/** The database folder, {@code dir/derby}. */
	Path databaseDir() {
		return this.dir.resolve("derby");
	}

	private static void requireRange(String name, int value, int min, int max) {
		if (value < min || value > max) {
			throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], was " + value);
		}
	}

}
