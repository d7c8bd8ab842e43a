package io.quorumkv.storage.lsm;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.StorageContractTest;

/**
 * The contract kit with zstd tables and a 64 KiB memtable, so that compressed tables are
 * flushed, compacted and read while the kit runs.
 */
class LsmStorageZstdContractTest extends StorageContractTest {

	@Override
	protected Storage open(Path dir) {
		return LsmStorage.open(LsmOptions.defaults(dir)
			.withMemtableSize(64 << 10)
			.withCompaction(4, 256 << 10, 10, 128 << 10)
			.withFsync(FsyncPolicy.NEVER)
			.withCompression(Compression.ZSTD), this.clock);
	}

}
