package io.quorumkv.storage.lsm;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.StorageContractTest;

/** The whole contract kit against the LSM engine with its default options. */
class LsmStorageContractTest extends StorageContractTest {

	@Override
	protected Storage open(Path dir) {
		return LsmStorage.open(LsmOptions.defaults(dir), this.clock);
	}

}
