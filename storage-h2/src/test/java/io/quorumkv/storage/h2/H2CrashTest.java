package io.quorumkv.storage.h2;

import java.nio.file.Path;
import java.time.Duration;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.StorageCrashTest;
import io.quorumkv.storage.contract.StorageOpener;
import org.junit.jupiter.api.Test;

/**
 * What H2 keeps when its process is killed mid-write, per durability mode (the figures of
 * docs/storage-h2.md come from these runs).
 */
class H2CrashTest extends StorageCrashTest {

	/** Opens H2 in the child and for the check. */
	public static final class Opener implements StorageOpener {

		@Override
		public Storage open(Path dir, String mode) {
			return H2Storage.open(
					H2StorageOptions.defaults(dir).withDurability(H2Durability.valueOf(mode), Duration.ofMillis(100)));
		}

	}

	@Test
	void writeEachCommitLosesNothing() throws Exception {
		crash(Opener.class, "WRITE_EACH_COMMIT").assertNothingLost();
	}

	@Test
	void periodicSyncLosesAtMostTheLastWriteDelay() throws Exception {
		// H2 writes commits in the background every 100 ms: a kill can take what was
		// acknowledged since its last write (plus scheduling slack on a loaded machine).
		crash(Opener.class, "PERIODIC_SYNC").assertLostOnlyWithin(Duration.ofSeconds(1));
	}

}
