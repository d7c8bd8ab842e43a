package io.quorumkv.service.storage;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;

/** Opens the configured backend on a folder: the node's data, and its hints apart. */
@FunctionalInterface
public interface StorageFactory {

	Storage open(Path directory);

	/**
	 * Opens a store of this node's own whose deletions are never replicated (the hints):
	 * a tombstone there needs no grace period, so the LSM is opened without its own.
	 */
	default Storage openLocal(Path directory) {
		return open(directory);
	}

}
