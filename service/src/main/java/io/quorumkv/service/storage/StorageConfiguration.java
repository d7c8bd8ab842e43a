package io.quorumkv.service.storage;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.derby.DerbyStorage;
import io.quorumkv.storage.h2.H2Storage;
import io.quorumkv.storage.lsm.LsmStorage;
import io.quorumkv.storage.lsm.io.FileIo;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Opens the backend chosen by {@code quorumkv.storage.backend} on the node's data folder.
 * The bean is closed last on shutdown, after the web server has drained in-flight
 * requests, which makes everything durable.
 */
@Configuration(proxyBeanMethods = false)
class StorageConfiguration {

	private static final Log logger = LogFactory.getLog(StorageConfiguration.class);

	/**
	 * Opens the backend; it judges expiry by the node's clock. The LSM's files go through
	 * the real file I/O; a test may give the node a {@link FileIo} bean of its own (a
	 * fault-injecting layer that can cut the power under the node, as
	 * {@code ClusterPowerLossTest} does). No property selects it.
	 */
	@Bean
	StorageFactory storageFactory(StorageProperties storage, Clock clock, ObjectProvider<FileIo> lsmFileIo) {
		return switch (storage.backend()) {
			case LSM -> new StorageFactory() {

				private final FileIo io = lsmFileIo.getIfAvailable(FileIo::real);

				/**
				 * Keeps every tombstone until the node sets its rule (RepairedTombstones,
				 * once the repair history is loaded): the engine's own grace period is 0
				 * here, so the compaction a restart may start at once would otherwise
				 * drop every tombstone, and the older versions with it, before the rule
				 * exists.
				 */
				@Override
				public Storage open(Path directory) {
					return LsmStorage.open(storage.lsm().toOptions(directory), this.io, clock, PurgePolicy.KEEP_ALL);
				}

				@Override
				public Storage openLocal(Path directory) {
					return LsmStorage.open(storage.lsm().toOptions(directory).withTombstoneGracePeriod(Duration.ZERO),
							this.io, clock, PurgePolicy.ANY);
				}

			};
			case H2 -> (directory) -> H2Storage.open(storage.h2().toOptions(directory), clock);
			case DERBY -> (directory) -> DerbyStorage.open(storage.derby().toOptions(directory), clock);
		};
	}

	@Bean(destroyMethod = "close")
	Storage storage(StorageFactory storages, StorageProperties settings, HttpProperties http) {
		Path directory = settings.path().resolve("data");
		logger.info("Opening " + settings.backend().name().toLowerCase() + " storage in "
				+ directory.toAbsolutePath().normalize());
		Storage storage = storages.open(directory);
		long maxKeySize = http.maxKeySize().toBytes();
		if (maxKeySize > storage.maxKeySize()) {
			storage.close();
			throw new IllegalStateException("quorumkv.http.max-key-size (" + maxKeySize + " bytes) exceeds what the "
					+ settings.backend().name().toLowerCase() + " backend stores (" + storage.maxKeySize() + " bytes)");
		}
		return storage;
	}

}
