package io.quorumkv.storage.derby;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.StorageCrashTest;
import io.quorumkv.storage.contract.StorageOpener;
import org.junit.jupiter.api.Test;

/**
 * What Derby keeps when its process is killed mid-write: in both durability modes a
 * commit has reached the operating system before it is acknowledged, so nothing
 * acknowledged is lost, new keys or overwrites and deletes, across repeated kills
 * (figures in docs/storage-derby.md).
 */
class DerbyCrashTest extends StorageCrashTest {

	/**
	 * Opens Derby in the child and for the check; {@code DEFAULT}: the default options.
	 */
	public static final class Opener implements StorageOpener {

		@Override
		public Storage open(Path dir, String mode) {
			DerbyStorageOptions defaults = DerbyStorageOptions.defaults(dir);
			return DerbyStorage.open("DEFAULT".equals(mode) ? defaults
					: defaults.withDurability(DerbyStorageOptions.Durability.valueOf(mode)));
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
	void noSyncLosesNoOverwriteNorDeleteAcrossTwoKills() throws Exception {
		crashRepeatedly(Opener.class, "NO_SYNC", 2).assertNothingLost();
	}

}
