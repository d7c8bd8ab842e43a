package io.quorumkv.service.backup;

/**
 * A snapshot that cannot be taken, verified or restored, with the reason (and the file,
 * when one is at fault).
 */
public class SnapshotException extends RuntimeException {

	public SnapshotException(String message) {
		super(message);
	}

	public SnapshotException(String message, Throwable cause) {
		super(message, cause);
	}

}
