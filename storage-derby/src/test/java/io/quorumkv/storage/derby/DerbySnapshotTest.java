package io.quorumkv.storage.derby;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.SnapshotContract;

/** The snapshot contract for Derby: its own online backup as the copy. */
class DerbySnapshotTest extends SnapshotContract<DerbyStorage> {

	@Override
	protected DerbyStorage open(Path dir) {
		return DerbyStorage.open(DerbyStorageOptions.defaults(dir));
	}

	@Override
	protected Storage openSnapshot(Path snapshot, Path workDir) throws IOException {
		return DerbyStorage.openSnapshot(snapshot, workDir, Clock.systemUTC());
	}

	@Override
	protected String format() {
		return DerbyStorage.SNAPSHOT_FORMAT;
	}

}
