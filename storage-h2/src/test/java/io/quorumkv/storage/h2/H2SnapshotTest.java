package io.quorumkv.storage.h2;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.SnapshotContract;

/** The snapshot contract for H2: its own online backup as the copy. */
class H2SnapshotTest extends SnapshotContract<H2Storage> {

	@Override
	protected H2Storage open(Path dir) {
		return H2Storage.open(H2StorageOptions.defaults(dir));
	}

	@Override
	protected Storage openSnapshot(Path snapshot, Path workDir) throws IOException {
		return H2Storage.openSnapshot(snapshot, workDir, Clock.systemUTC());
	}

	@Override
	protected String format() {
		return H2Storage.SNAPSHOT_FORMAT;
	}

}
