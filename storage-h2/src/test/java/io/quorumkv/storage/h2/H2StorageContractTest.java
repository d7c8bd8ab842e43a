package io.quorumkv.storage.h2;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.StorageContractTest;

/** The whole contract kit against H2 with its defaults. */
class H2StorageContractTest extends StorageContractTest {

	@Override
	protected Storage open(Path dir) {
		return H2Storage.open(H2StorageOptions.defaults(dir), this.clock);
	}

}
