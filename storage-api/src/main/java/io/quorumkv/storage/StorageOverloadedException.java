package io.quorumkv.storage;

/**
 * The backend's bounded queue or pool is full; the caller should retry later. The service
 * answers 503 with {@code Retry-After}.
 */
public class StorageOverloadedException extends StorageException {

	public StorageOverloadedException(String message) {
		super(message);
	}

}
