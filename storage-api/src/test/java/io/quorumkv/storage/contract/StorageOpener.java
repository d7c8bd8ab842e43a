package io.quorumkv.storage.contract;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;

/**
 * Opens a backend in a child JVM of {@link StorageCrashTest}. Implementations are public
 * with a public no-argument constructor.
 */
public interface StorageOpener {

	/**
	 * @param dir the data folder
	 * @param mode a backend-specific setting under test, e.g. a durability mode
	 */
	Storage open(Path dir, String mode);

}
