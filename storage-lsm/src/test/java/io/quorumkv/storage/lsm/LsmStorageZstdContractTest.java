package io.quorumkv.storage.lsm;

import java.nio.file.Path;
import java.time.Duration;

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
			// Unsynced writes outrun flushes and compactions on a loaded machine: a stall
			// is expected here, a stall past the default 10 s is not a contract failure.
			.withMaxStall(Duration.ofMinutes(1))
			.withCompression(Compression.ZSTD), this.clock);
	}

}
