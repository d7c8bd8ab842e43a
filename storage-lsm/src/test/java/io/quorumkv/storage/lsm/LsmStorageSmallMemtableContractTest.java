package io.quorumkv.storage.lsm;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.StorageContractTest;

/**
 * The contract kit again with a 64 KiB memtable and small levels, so that flushes, stalls
 * and compactions happen while the kit runs.
 */
class LsmStorageSmallMemtableContractTest extends StorageContractTest {

	@Override
	protected Storage open(Path dir) {
		return LsmStorage.open(LsmOptions.defaults(dir)
			.withMemtableSize(64 << 10)
			.withCompaction(4, 256 << 10, 10, 128 << 10)
			.withFsync(FsyncPolicy.ALWAYS), this.clock);
	}

}
