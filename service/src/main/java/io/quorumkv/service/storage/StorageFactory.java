package io.quorumkv.service.storage;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;

/** Opens the configured backend on a folder: the node's data, and its hints apart. */
@FunctionalInterface
public interface StorageFactory {

	Storage open(Path directory);

}
