package io.quorumkv.storage.derby;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.StorageContractTest;

/** The whole storage contract kit on Derby with its default options. */
class DerbyStorageContractTest extends StorageContractTest {

	@Override
	protected Storage open(Path dir) {
		return DerbyStorage.open(DerbyStorageOptions.defaults(dir), this.clock);
	}

}
