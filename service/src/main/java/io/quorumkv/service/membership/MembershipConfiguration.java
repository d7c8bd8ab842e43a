package io.quorumkv.service.membership;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.metadata.MetadataGroup;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.peer.StreamProperties;
import io.quorumkv.service.storage.StorageProperties;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextClosedEvent;

/**
 * Ring exchange and carrying changes out: transfers, the change's driver (on the metadata
 * group's leader), clean-up, and the operator's operations ({@link Membership}); the
 * changes themselves are entries of the metadata log ({@link MetadataGroup}).
 */
@Configuration(proxyBeanMethods = false)
class MembershipConfiguration {

	@Bean
	RingSync ringSync(ClusterState state, PeerClient peers, MembershipProperties membership, MeterRegistry meters) {
		RingSync sync = new RingSync(state, peers, membership.callTimeout());
		peers.useRing(state::stamp, state::epoch, sync::onNewerAnswer);
		Gauge.builder("quorumkv.ring.epoch", state, ClusterState::epoch)
			.description("The epoch of the ring this node serves under")
			.register(meters);
		Gauge
			.builder("quorumkv.membership.change.active", state,
					(s) -> s.ring().map((ring) -> (ring.change() != null) ? 1.0 : 0.0).orElse(0.0))
			.description("1 while a membership change is under way")
			.register(meters);
		return sync;
	}

	@Bean
	Cleanup cleanup(ClusterState state, Storage storage, PeerClient peers, MeterRegistry meters,
			StorageProperties settings, MembershipProperties membership) {
		return new Cleanup(state, storage, settings.path(), membership.cleanupRate(), peers, membership.pollInterval(),
				membership.callTimeout(), meters);
	}

	@Bean
	TransferSource transferSource(ClusterState state, Storage storage) {
		return new TransferSource(state, storage);
	}

	@Bean(destroyMethod = "close")
	Transfers transfers(ClusterState state, PeerClient peers, Storage storage, StorageProperties settings,
			HttpProperties http, MembershipProperties membership, StreamProperties stream, MeterRegistry meters) {
		int maxFrame = InternalApi.maxFrame(stream, (int) http.maxBodySize().toBytes());
		return new Transfers(state, peers, storage, settings.path(), membership, maxFrame, meters);
	}

	@Bean(destroyMethod = "close")
	ChangeDriver changeDriver(ClusterState state, MetadataGroup metadata, Transfers transfers, PeerClient peers,
			MembershipProperties membership) {
		return new ChangeDriver(state, metadata, transfers, peers, membership.pollInterval(), membership.callTimeout());
	}

	@Bean
	Membership membership(ClusterState state, MetadataGroup metadata, PeerClient peers, Transfers transfers,
			Cleanup cleanup, RingSync sync, MembershipProperties membership) {
		// A newcomer notes whether its storage is empty before it adopts the ring that
		// adds it, whichever way that ring comes (the log, or a peer's newer stamp).
		metadata.beforeFirstRing(cleanup::noteIfNewcomer);
		sync.beforeFirstRing(cleanup::noteIfNewcomer);
		return new Membership(state, metadata, peers, transfers, cleanup, membership.callTimeout());
	}

	@Bean
	ForcedReconfiguration forcedReconfiguration(ClusterState state, MetadataGroup metadata, Membership membership,
			PeerClient peers, RingSync sync, MembershipProperties properties) {
		ForcedReconfiguration.Steps steps = new ForcedReconfiguration.Steps() {

			@Override
			public Mono<Void> requireDead(RingNode node) {
				return membership.requireDead(node);
			}

			@Override
			public Mono<Ring> forceBase(List<String> lostIds) {
				return metadata.forceBase(lostIds);
			}

			@Override
			public Mono<MetadataGroup.Forced> forceNewGeneration(List<String> lostIds) {
				return metadata.forceNewGeneration(lostIds);
			}

		};
		return new ForcedReconfiguration(state, steps, peers, sync, properties.callTimeout());
	}

	/**
	 * Once the node serves: resumes its transfers, and cleans up after each finished
	 * change when {@code auto-cleanup} is on (a node the change removed keeps its data).
	 */
	@Bean
	ApplicationListener<ApplicationReadyEvent> membershipStarter(ClusterState state, Transfers transfers,
			Cleanup cleanup, MembershipProperties membership) {
		return (event) -> {
			AtomicReference<@Nullable Ring> previous = new AtomicReference<>(state.ring().orElse(null));
			state.onChange((ring) -> {
				Ring before = previous.getAndSet(ring);
				RingChange ended = (before != null && ring.change() == null) ? before.change() : null;
				if (ended != null && membership.autoCleanup() && ring.isMember(state.self().id())) {
					cleanup.runInTurn(ring, ended.id(), membership.cleanupDelay())
						.subscribe(null, (error) -> LogFactory.getLog(Cleanup.class)
							.warn("Cleanup after epoch " + ring.epoch() + " did not run: " + error.getMessage()));
				}
			});
			transfers.reconcile();
		};
	}

	@Bean(destroyMethod = "close")
	AutoJoin autoJoin(ClusterState state, PeerClient peers, Topology topology, MembershipProperties membership) {
		return new AutoJoin(state, peers, topology.peers(), membership.pollInterval(), membership.callTimeout());
	}

	/**
	 * With {@code auto-join}, a node waiting to be joined asks its seeds once it serves.
	 */
	@Bean
	ApplicationListener<ApplicationReadyEvent> autoJoinStarter(AutoJoin autoJoin, MembershipProperties membership) {
		return (event) -> {
			if (membership.autoJoin()) {
				autoJoin.start();
			}
		};
	}

	/** Stops the background work of membership when the context starts closing. */
	@Bean
	ApplicationListener<ContextClosedEvent> membershipStopper(Transfers transfers, ChangeDriver driver,
			AutoJoin autoJoin) {
		return (event) -> {
			autoJoin.close();
			driver.close();
			transfers.close();
		};
	}

}
