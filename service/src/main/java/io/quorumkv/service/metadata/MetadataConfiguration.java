package io.quorumkv.service.metadata;

import java.io.IOException;
import java.io.UncheckedIOException;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.storage.StorageProperties;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The metadata layer: the Raft endpoint the internal routes hand calls to, the transport
 * of the calls this node makes, and the node's member of the metadata group, started once
 * the node's routes answer.
 */
@Configuration(proxyBeanMethods = false)
class MetadataConfiguration {

	/**
	 * Threads that run the Raft server's calls (each short: a vote, a batch of entries).
	 */
	private static final int THREADS = 4;

	/** Calls waiting for a thread; past it a peer's call is refused (Raft retries). */
	private static final int QUEUE = 256;

	/** The largest Raft message sent or accepted. */
	private static final int MAX_MESSAGE = 4 << 20;

	@Bean(destroyMethod = "dispose")
	Scheduler raftScheduler() {
		return Schedulers.newBoundedElastic(THREADS, QUEUE, "quorumkv-raft", 60, true);
	}

	/**
	 * Where the transport's asynchronous calls complete (Ratis goes on in their
	 * callbacks): apart from {@link #raftScheduler}, so that a blocking Raft call waiting
	 * there for its answer never waits for a thread of its own pool.
	 */
	@Bean(destroyMethod = "dispose")
	Scheduler raftCallbacks() {
		return Schedulers.newBoundedElastic(THREADS, QUEUE, "quorumkv-raft-callback", 60, true);
	}

	@Bean
	RaftEndpoint raftEndpoint(Scheduler raftScheduler, MeterRegistry meters) {
		return new RaftEndpoint(raftScheduler, meters);
	}

	/**
	 * The shared view of who is up; a node seen up again closes this node's breakers
	 * toward it. Down after the longest election timeout without news of it.
	 */
	@Bean
	Liveness liveness(PeerClient peers, MetadataProperties metadata) {
		return new Liveness(metadata.electionMax().toMillis(), System::nanoTime, peers::heardFrom);
	}

	@Bean(destroyMethod = "close")
	MetadataGroup metadataGroup(ClusterState state, PeerClient peers, RaftEndpoint endpoint, Scheduler raftScheduler,
			Scheduler raftCallbacks, StorageProperties storage, MeterRegistry meters, Liveness liveness,
			MetadataProperties metadata) {
		MetadataTiming settings = metadata.timing();
		RaftTransport transport = new RaftTransport(peers, settings.requestTimeout(), MAX_MESSAGE, raftCallbacks,
				liveness);
		MetadataGroup group = new MetadataGroup(state, transport, endpoint, raftScheduler, storage.path(), settings,
				meters);
		liveness.leaderViewFrom(group::heardByLeader);
		return group;
	}

	@Bean
	ApplicationListener<ApplicationReadyEvent> metadataStarter(MetadataGroup group) {
		return (event) -> {
			try {
				group.start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("the metadata group did not start", ex);
			}
		};
	}

}
