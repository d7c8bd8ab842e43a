package io.quorumkv.storage.derby;

import java.nio.file.Path;

import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.StorageCrashTest;
import io.quorumkv.storage.contract.StorageOpener;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What Derby keeps when its process is killed mid-write: in both durability modes a
 * commit has reached the operating system before it is acknowledged, so nothing
 * acknowledged is lost (figures in docs/storage-derby.md).
 */
class DerbyCrashTest extends StorageCrashTest {

	/** Opens Derby in the child and for the check. */
	public static final class Opener implements StorageOpener {

		@Override
		public Storage open(Path dir, String mode) {
			return DerbyStorage
				.open(DerbyStorageOptions.defaults(dir).withDurability(DerbyStorageOptions.Durability.valueOf(mode)));
		}

	}

	@Override
	protected int acknowledgementsBeforeKill() {
		return 2_000;
	}

	@ParameterizedTest
	@EnumSource(DerbyStorageOptions.Durability.class)
	void nothingAcknowledgedIsLost(DerbyStorageOptions.Durability durability) throws Exception {
		crash(Opener.class, durability.name()).assertNothingLost();
	}

}
