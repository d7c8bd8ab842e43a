package io.quorumkv.service.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import io.quorumkv.service.config.QuorumKvProperties.Backend;
import io.quorumkv.storage.derby.DerbyStorageOptions;
import io.quorumkv.storage.h2.H2StorageOptions;
import io.quorumkv.storage.lsm.FsyncPolicy;
import io.quorumkv.storage.lsm.LsmOptions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** Binding of {@code quorumkv.*}: defaults, the backends' own defaults, validation. */
class QuorumKvPropertiesTest {

	private static QuorumKvProperties bind(Map<String, String> properties) {
		return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("quorumkv",
				QuorumKvProperties.class);
	}

	@Test
	void defaultsAreTheBackendsOwnDefaults() {
		QuorumKvProperties properties = bind(Map.of());
		Path dir = Path.of("/tmp/x");
		assertThat(properties.storage().backend()).isEqualTo(Backend.LSM);
		// But the LSM's own grace floor: the node purges tombstones by its own rule, a
		// grace period of 10 days and a repair (quorumkv.storage.tombstone-grace-period).
		assertThat(properties.storage().lsm().toOptions(dir))
			.isEqualTo(LsmOptions.defaults(dir).withTombstoneGracePeriod(Duration.ZERO));
		assertThat(properties.storage().tombstoneGracePeriod()).isEqualTo(Duration.ofDays(10));
		assertThat(properties.storage().h2().toOptions(dir)).isEqualTo(H2StorageOptions.defaults(dir));
		assertThat(properties.storage().derby().toOptions(dir)).isEqualTo(DerbyStorageOptions.defaults(dir));
		assertThat(properties.cluster().placement()).isEqualTo(QuorumKvProperties.PlacementSetting.RENDEZVOUS);
		assertThat(properties.http().maxKeySize().toBytes()).isEqualTo(1024);
		assertThat(properties.http().readTimeout()).isEqualTo(Duration.ofSeconds(30));
		assertThat(properties.http().idleTimeout()).isEqualTo(Duration.ofSeconds(60));
	}

	@Test
	void kebabCaseNamesBind() {
		QuorumKvProperties properties = bind(Map.of("quorumkv.storage.backend", "derby", "quorumkv.storage.lsm.fsync",
				"always", "quorumkv.storage.lsm.memtable-size", "16MB", "quorumkv.storage.derby.durability", "no-sync",
				"quorumkv.cluster.placement", "consistent-hash", "quorumkv.cluster.nodes",
				"http://127.0.0.1:1,http://127.0.0.1:2"));
		assertThat(properties.storage().backend()).isEqualTo(Backend.DERBY);
		assertThat(properties.storage().lsm().fsync()).isEqualTo(FsyncPolicy.ALWAYS);
		assertThat(properties.storage().lsm().toOptions(Path.of("d")).memtableSize()).isEqualTo(16L << 20);
		assertThat(properties.storage().derby().durability()).isEqualTo(DerbyStorageOptions.Durability.NO_SYNC);
		assertThat(properties.cluster().placement()).isEqualTo(QuorumKvProperties.PlacementSetting.CONSISTENT_HASH);
		assertThat(properties.cluster().nodes()).hasSize(2);
	}

	@Test
	void unknownBackendFailsWithTheValidNames() {
		assertThatThrownBy(() -> bind(Map.of("quorumkv.storage.backend", "mongo"))).isInstanceOf(BindException.class)
			.hasMessageContaining("quorumkv.storage.backend");
	}

	@Test
	void incrementalBackupsAreRefusedOnTheSqlBackends() {
		assertThat(bind(Map.of("quorumkv.storage.lsm.incremental-backups", "true")).storage()
			.lsm()
			.toOptions(Path.of("data"))
			.incrementalBackups()).isTrue();
		assertThatThrownBy(() -> bind(
				Map.of("quorumkv.storage.backend", "h2", "quorumkv.storage.lsm.incremental-backups", "true")))
			.rootCause()
			.hasMessageStartingWith("quorumkv.storage.lsm.incremental-backups is for the lsm backend: the h2 backend");
	}

	@Test
	void badLimitsFailWithThePropertyName() {
		assertThatThrownBy(() -> bind(Map.of("quorumkv.http.max-in-flight", "0")))
			.hasRootCauseMessage("quorumkv.http.max-in-flight must be at least 1");
		assertThatThrownBy(() -> bind(Map.of("quorumkv.cluster.replica-timeout", "0s")))
			.hasRootCauseMessage("quorumkv.cluster.replica-timeout must be positive");
		assertThatThrownBy(() -> bind(Map.of("quorumkv.http.read-timeout", "0s")))
			.hasRootCauseMessage("quorumkv.http.read-timeout must be positive");
		assertThatThrownBy(() -> bind(Map.of("quorumkv.http.idle-timeout", "-1s")))
			.hasRootCauseMessage("quorumkv.http.idle-timeout must be positive");
	}

	@Test
	void secretIsNeverPrinted() {
		QuorumKvProperties properties = bind(Map.of("quorumkv.cluster.secret", "hunter2"));
		assertThat(properties.toString()).doesNotContain("hunter2");
	}

}
