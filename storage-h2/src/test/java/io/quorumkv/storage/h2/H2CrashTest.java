package io.quorumkv.storage.h2;

import java.nio.file.Path;
import java.time.Duration;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.StorageCrashTest;
import io.quorumkv.storage.contract.StorageOpener;
import org.junit.jupiter.api.Test;

/**
 * What H2 keeps when its process is killed mid-write, per durability mode (the figures of
 * docs/storage-h2.md come from these runs): the default loses nothing acknowledged,
 * overwrites and deletes included, across repeated kills.
 */
class H2CrashTest extends StorageCrashTest {

	/** Opens H2 in the child and for the check; {@code DEFAULT}: the default options. */
	public static final class Opener implements StorageOpener {

		@Override
		public Storage open(Path dir, String mode) {
			H2StorageOptions defaults = H2StorageOptions.defaults(dir);
			return H2Storage.open("DEFAULT".equals(mode) ? defaults
					: defaults.withDurability(H2Durability.valueOf(mode), Duration.ofMillis(100)));
		}

	}

	@Override
	protected int acknowledgementsBeforeKill() {
		return 2_000;
	}

	@Test
	void theDefaultLosesNoOverwriteNorDeleteAcrossThreeKills() throws Exception {
		crashRepeatedly(Opener.class, "DEFAULT", 3).assertNothingLost();
	}

	@Test
	void periodicSyncLosesOnlyWritesOfTheLastWriteDelay() throws Exception {
		// H2 writes commits in the background every 100 ms: a kill can take what was
		// acknowledged since its last write (plus scheduling slack on a loaded machine),
		// never a write acknowledged a second before it. Each writer runs 3 s, so that
		// most of what it acknowledged is older than that second.
		crashRepeatedly(Opener.class, "PERIODIC_SYNC", 2, Duration.ofSeconds(3))
			.assertLostOnlyWithin(Duration.ofSeconds(1));
	}

}
