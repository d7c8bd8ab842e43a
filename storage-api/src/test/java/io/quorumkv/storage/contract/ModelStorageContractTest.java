package io.quorumkv.storage.contract;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;

/** The reference model passes its own kit. */
class ModelStorageContractTest extends StorageContractTest {

	@Override
	protected Storage open(Path dir) {
		return ModelStorage.open(dir, this.clock);
	}

}
