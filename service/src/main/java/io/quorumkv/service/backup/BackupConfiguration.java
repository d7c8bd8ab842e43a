package io.quorumkv.service.backup;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.replication.ReplicationService;
import io.quorumkv.service.storage.StorageProperties;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.lsm.io.FileIo;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The node's snapshots and restores. */
@Configuration(proxyBeanMethods = false)
class BackupConfiguration {

	/** Snapshots in {@code <storage path>/snapshots}, beside the data folder. */
	@Bean
	NodeSnapshots nodeSnapshots(Storage storage, ClusterState cluster, StorageProperties settings,
			ObjectProvider<FileIo> lsmFileIo) {
		return new NodeSnapshots(settings.path().resolve(NodeSnapshots.FOLDER), storage,
				settings.backend().name().toLowerCase(java.util.Locale.ROOT), cluster.self(),
				() -> cluster.ring().orElse(null), lsmFileIo.getIfAvailable(FileIo::real));
	}

	@Bean
	Restore restore(ReplicationService replication, HybridLogicalClock clock, StorageProperties settings) {
		return new Restore(replication, clock, settings.tombstoneGracePeriod());
	}

}
