package io.quorumkv.service.config;

import java.nio.file.Path;

import io.quorumkv.service.config.QuorumKvProperties.StorageProperties;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.h2.H2Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Opens the backend chosen by {@code quorumkv.storage.backend} on the node's data folder.
 * The bean is closed last on shutdown, after the web server has drained in-flight
 * requests, which makes everything durable.
 */
@Configuration(proxyBeanMethods = false)
public class StorageConfiguration {

	private static final Log logger = LogFactory.getLog(StorageConfiguration.class);

	@Bean
	StorageFactory storageFactory(QuorumKvProperties properties) {
		StorageProperties storage = properties.storage();
		return switch (storage.backend()) {
			case H2 -> (directory) -> H2Storage.open(storage.h2().toOptions(directory));
			case LSM, DERBY -> throw new IllegalStateException(
					"quorumkv.storage.backend=" + storage.backend().name().toLowerCase() + " is not available yet");
		};
	}

	@Bean(destroyMethod = "close")
	Storage storage(StorageFactory storages, QuorumKvProperties properties) {
		Path directory = properties.storage().path().resolve("data");
		logger.info("Opening " + properties.storage().backend().name().toLowerCase() + " storage in "
				+ directory.toAbsolutePath().normalize());
		return storages.open(directory);
	}

}
