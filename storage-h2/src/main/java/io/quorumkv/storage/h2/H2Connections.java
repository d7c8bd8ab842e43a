package io.quorumkv.storage.h2;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;

import io.quorumkv.storage.StorageException;
import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.Connection;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The H2 connection factory, the bounded pool over it, and the threads all blocking H2
 * work runs on; and the clean shutdown of the three.
 */
final class H2Connections {

	private final H2ConnectionFactory factory;

	private final ConnectionPool pool;

	private final H2Threads threads;

	private H2Connections(H2ConnectionFactory factory, ConnectionPool pool, H2Threads threads) {
		this.factory = factory;
		this.pool = pool;
		this.threads = threads;
	}

	static H2Connections open(H2StorageOptions options) {
		try {
			Files.createDirectories(options.directory());
		}
		catch (IOException ex) {
			throw new StorageException("h2: cannot create data folder " + options.directory() + ": " + ex, ex);
		}
		H2ConnectionFactory factory = new H2ConnectionFactory(configuration(options));
		// One thread per connection; the queue bounds the work waiting for a thread.
		H2Threads threads = new H2Threads(options.poolMaxSize(), Math.max(16, options.maxPendingAcquires()));
		ConnectionPoolConfiguration poolConfiguration = ConnectionPoolConfiguration.builder(factory)
			.name("quorumkv-h2")
			.initialSize(options.poolInitialSize())
			.maxSize(options.poolMaxSize())
			.maxAcquireTime(options.acquireTimeout())
			.maxIdleTime(Duration.ofMinutes(30))
			.allocatorSubscribeOn(threads.scheduler())
			.customizer((builder) -> builder.maxPendingAcquire(options.maxPendingAcquires()))
			.build();
		return new H2Connections(factory, new ConnectionPool(poolConfiguration), threads);
	}

	/**
	 * A test hook: the prefix of an H2 file system under the database's path (a fault
	 * injecting one in tests); empty, H2's own.
	 */
	static volatile String fileSystem = "";

	/**
	 * The file URL with its settings. {@code DB_CLOSE_ON_EXIT=FALSE}: the service closes
	 * the storage after its own graceful shutdown, H2's shutdown hook must not close the
	 * database under it. {@code DB_CLOSE_DELAY=-1}: the database stays open until
	 * {@code SHUTDOWN}, even while the pool holds no connection.
	 */
	private static H2ConnectionConfiguration configuration(H2StorageOptions options) {
		int writeDelayMillis = options.durability().writeDelayMillis(options.syncInterval().toMillis());
		return H2ConnectionConfiguration.builder()
			.file(fileSystem + options.databasePath())
			.username("sa")
			.password("")
			.property("WRITE_DELAY", Integer.toString(writeDelayMillis))
			.property("LOCK_TIMEOUT", Long.toString(options.lockTimeout().toMillis()))
			.property("CACHE_SIZE", Long.toString(options.cacheSizeMb() * 1024L))
			.property("DB_CLOSE_ON_EXIT", "FALSE")
			.property("DB_CLOSE_DELAY", "-1")
			.build();
	}

	ConnectionPool pool() {
		return this.pool;
	}

	Scheduler scheduler() {
		return this.threads.scheduler();
	}

	H2Threads threads() {
		return this.threads;
	}

	/**
	 * {@code SHUTDOWN} on a connection of its own (so a full pool cannot delay it):
	 * closes every session, syncs and releases the file. Then the pool and the scheduler
	 * are disposed.
	 */
	void shutdownDatabase(Duration timeout) {
		try {
			Mono.usingWhen(this.factory.create(), H2Connections::shutdown,
					(connection) -> Mono.from(connection.close()).onErrorComplete())
				.subscribeOn(this.threads.scheduler())
				.block(timeout);
		}
		catch (RuntimeException ex) {
			throw H2Errors.translate("shutdown", ex, false);
		}
		finally {
			close();
		}
	}

	/** Disposes the pool and the scheduler without shutting the database down first. */
	void close() {
		try {
			this.pool.dispose();
		}
		finally {
			this.threads.shutdown();
		}
	}

	/**
	 * Stops H2's background writer ({@code WRITE_DELAY 0}) and syncs before
	 * {@code SHUTDOWN}, so that closing the store never has to stop a writer thread that
	 * is busy with a delayed write.
	 */
	private static Mono<Void> shutdown(Connection connection) {
		return Flux.fromIterable(H2Schema.SHUTDOWN_SEQUENCE)
			.concatMap((sql) -> Flux.from(connection.createStatement(sql).execute())
				.concatMap((result) -> result.getRowsUpdated()))
			.then();
	}

}
