package io.quorumkv.service.config;

import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.replication.ReplicationService;
import io.quorumkv.storage.Storage;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The coordinator and its clock. */
@Configuration(proxyBeanMethods = false)
public class ReplicationConfiguration {

	@Bean
	HybridLogicalClock hybridLogicalClock() {
		return new HybridLogicalClock();
	}

	@Bean
	ReplicationService replicationService(Storage storage, HybridLogicalClock clock) {
		return new ReplicationService(storage, clock);
	}

}
