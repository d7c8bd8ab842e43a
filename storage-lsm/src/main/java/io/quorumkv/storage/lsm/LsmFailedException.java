package io.quorumkv.storage.lsm;

import java.nio.file.Path;

import io.quorumkv.storage.StorageException;

/**
 * The LSM storage failed durable I/O (a write or {@code fsync} of its WAL, a table or the
 * manifest, or background work) and stays failed until it is restarted: it refuses writes
 * and flushes with this exception, whose message and cause name the first failure, and
 * keeps serving reads. A restart recovers from what is on the disk. Why not retry: after
 * a failed {@code fsync} Linux may have dropped the unsynced pages and reports the next
 * {@code fsync} a success (PostgreSQL's "fsyncgate", 2018), so nothing written before the
 * failure can be called durable any more.
 *
 * <p>
 * The service answers it as any {@link StorageException}: 503 with the message.
 */
public final class LsmFailedException extends StorageException {

	LsmFailedException(Path dir, Throwable cause) {
		super("LSM storage in " + dir + " failed and refuses writes and flushes until it is restarted: " + cause,
				cause);
	}

}
