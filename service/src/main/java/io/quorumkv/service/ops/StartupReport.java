package io.quorumkv.service.ops;

import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.config.QuorumKvProperties;
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

	private final Topology topology;

	private final QuorumKvProperties properties;

	StartupReport(Topology topology, QuorumKvProperties properties) {
		this.topology = topology;
		this.properties = properties;
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		logger.info("QuorumKV node " + this.topology.self() + " ready: cluster of " + this.topology.size() + " "
				+ this.topology.nodes() + ", placement " + this.properties.cluster().placement().name().toLowerCase()
				+ ", backend " + this.properties.storage().backend().name().toLowerCase() + ", data "
				+ this.properties.storage().path().toAbsolutePath().normalize() + ", event loops "
				+ LoopResources.DEFAULT_IO_WORKER_COUNT);
	}

}
