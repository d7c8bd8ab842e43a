package io.quorumkv.service.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import io.quorumkv.service.storage.StorageProperties.Backend;
import io.quorumkv.storage.derby.DerbyStorageOptions;
import io.quorumkv.storage.h2.H2StorageOptions;
import io.quorumkv.storage.lsm.FsyncPolicy;
import io.quorumkv.storage.lsm.LsmOptions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * Binding of {@code quorumkv.storage.*}: defaults, the backends' own defaults,
 * validation.
 */
class StoragePropertiesTest {

	private static StorageProperties bind(Map<String, String> properties) {
		return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("quorumkv.storage",
				StorageProperties.class);
	}

	@Test
	void defaultsAreTheBackendsOwnDefaults() {
		StorageProperties storage = bind(Map.of());
		Path dir = Path.of("/tmp/x");
		assertThat(storage.backend()).isEqualTo(Backend.LSM);
		// But the LSM's own grace floor: the node purges tombstones by its own rule, a
		// grace period of 10 days and a repair (quorumkv.storage.tombstone-grace-period).
		assertThat(storage.lsm().toOptions(dir))
			.isEqualTo(LsmOptions.defaults(dir).withTombstoneGracePeriod(Duration.ZERO));
		assertThat(storage.tombstoneGracePeriod()).isEqualTo(Duration.ofDays(10));
		assertThat(storage.h2().toOptions(dir)).isEqualTo(H2StorageOptions.defaults(dir));
		assertThat(storage.derby().toOptions(dir)).isEqualTo(DerbyStorageOptions.defaults(dir));
	}

	@Test
	void kebabCaseNamesBind() {
		StorageProperties storage = bind(
				Map.of("quorumkv.storage.backend", "derby", "quorumkv.storage.lsm.fsync", "always",
						"quorumkv.storage.lsm.memtable-size", "16MB", "quorumkv.storage.derby.durability", "no-sync"));
		assertThat(storage.backend()).isEqualTo(Backend.DERBY);
		assertThat(storage.lsm().fsync()).isEqualTo(FsyncPolicy.ALWAYS);
		assertThat(storage.lsm().toOptions(Path.of("d")).memtableSize()).isEqualTo(16L << 20);
		assertThat(storage.derby().durability()).isEqualTo(DerbyStorageOptions.Durability.NO_SYNC);
	}

	@Test
	void unknownBackendFailsWithTheValidNames() {
		assertThatThrownBy(() -> bind(Map.of("quorumkv.storage.backend", "mongo"))).isInstanceOf(BindException.class)
			.hasMessageContaining("quorumkv.storage.backend");
	}

	@Test
	void incrementalBackupsAreRefusedOnTheSqlBackends() {
		assertThat(bind(Map.of("quorumkv.storage.lsm.incremental-backups", "true")).lsm()
			.toOptions(Path.of("data"))
			.incrementalBackups()).isTrue();
		assertThatThrownBy(() -> bind(
				Map.of("quorumkv.storage.backend", "h2", "quorumkv.storage.lsm.incremental-backups", "true")))
			.rootCause()
			.hasMessageStartingWith("quorumkv.storage.lsm.incremental-backups is for the lsm backend: the h2 backend");
	}

}
