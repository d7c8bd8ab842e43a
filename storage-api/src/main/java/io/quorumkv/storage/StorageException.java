package io.quorumkv.storage;

/**
 * A backend could not do what was asked (I/O failure, full disk, pool exhausted). The
 * service answers it with a 5xx and a log line; it never means the input was bad.
 */
public class StorageException extends RuntimeException {

	public StorageException(String message) {
		super(message);
	}

	public StorageException(String message, Throwable cause) {
		super(message, cause);
	}

}
