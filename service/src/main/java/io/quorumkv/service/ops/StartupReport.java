package io.quorumkv.service.ops;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.storage.StorageProperties;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.netty.resources.LoopResources;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;

/**
 * One line when the node is ready: who it is, its cluster, backend, data folder and
 * number of event loops.
 */
@Component
class StartupReport implements ApplicationListener<ApplicationReadyEvent> {

	private static final Log logger = LogFactory.getLog(StartupReport.class);

	private final ClusterState cluster;

	private final StorageProperties storage;

	StartupReport(ClusterState cluster, StorageProperties storage) {
		this.cluster = cluster;
		this.storage = storage;
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		logger.info("QuorumKV node " + this.cluster.self() + " ready: "
				+ this.cluster.ring()
					.map((ring) -> ring.describe() + ", placement " + RingJson.strategyLabel(ring.strategy()))
					.orElse("no ring yet (waiting to be joined)")
				+ ", backend " + this.storage.backend().name().toLowerCase() + ", data "
				+ this.storage.path().toAbsolutePath().normalize() + ", event loops "
				+ LoopResources.DEFAULT_IO_WORKER_COUNT);
	}

}
