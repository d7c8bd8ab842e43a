package io.quorumkv.service.membership;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.replication.PeerClient;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Ring exchange and membership changes. */
@Configuration(proxyBeanMethods = false)
class MembershipConfiguration {

	@Bean
	RingSync ringSync(ClusterState state, PeerClient peers, QuorumKvProperties properties) {
		RingSync sync = new RingSync(state, peers, properties.cluster().replicaTimeout().multipliedBy(5));
		peers.useRing(state::stamp, state::epoch, sync::onNewerAnswer);
		return sync;
	}

}
