package io.quorumkv.storage.h2;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;

import io.quorumkv.storage.StorageClosedException;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.StorageOverloadedException;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.R2dbcTimeoutException;
import org.jspecify.annotations.Nullable;
import reactor.pool.PoolAcquirePendingLimitException;
import reactor.pool.PoolAcquireTimeoutException;

/**
 * Maps driver, pool and Spring exceptions to the SPI's: no raw driver exception leaves
 * the module.
 */
final class H2Errors {

	static final String BACKEND = "h2";

	/** H2's "Unique index or primary key violation". */
	private static final int DUPLICATE_KEY = 23505;

	/** H2's "Timeout trying to lock table" (MVStore row lock wait timed out). */
	private static final int LOCK_TIMEOUT = 50200;

	/** H2's "Concurrent update" (MVStore write-write conflict). */
	private static final int CONCURRENT_UPDATE = 90131;

	private H2Errors() {
	}

	/** The SPI exception for a failure of {@code operation}. */
	static StorageException translate(String operation, Throwable failure, boolean closed) {
		if (failure instanceof StorageException storageException) {
			return storageException;
		}
		if (closed) {
			// Work cut short by close (a disposed pool or scheduler, a shut-down
			// session).
			return new StorageClosedException(BACKEND);
		}
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (isOverload(cause)) {
				return new StorageOverloadedException(
						"h2 " + operation + ": connection pool exhausted (" + cause.getMessage() + ")");
			}
		}
		R2dbcException driver = driverCause(failure);
		String detail = (driver != null) ? "[" + driver.getErrorCode() + "] " + driver.getMessage()
				: failure.getClass().getSimpleName() + ": " + failure.getMessage();
		return new StorageException("h2 " + operation + " failed: " + detail, failure);
	}

	/**
	 * Whether the failure is a conflict with a concurrent upsert that a retry resolves.
	 */
	static boolean isRetryableConflict(Throwable failure) {
		R2dbcException driver = driverCause(failure);
		if (driver == null) {
			return false;
		}
		int code = driver.getErrorCode();
		return code == DUPLICATE_KEY || code == CONCURRENT_UPDATE || code == LOCK_TIMEOUT;
	}

	private static boolean isOverload(Throwable cause) {
		return cause instanceof PoolAcquirePendingLimitException || cause instanceof PoolAcquireTimeoutException
				|| cause instanceof RejectedExecutionException
				|| (cause instanceof R2dbcTimeoutException && cause.getCause() instanceof TimeoutException);
	}

	private static @Nullable R2dbcException driverCause(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof R2dbcException driver) {
				return driver;
			}
		}
		return null;
	}

}
