package io.quorumkv.storage;

/** The storage was used after {@link Storage#close()}. */
public class StorageClosedException extends StorageException {

	public StorageClosedException(String backend) {
		super(backend + " storage is closed");
	}

}
