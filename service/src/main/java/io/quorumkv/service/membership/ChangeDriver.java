package io.quorumkv.service.membership;

import java.time.Duration;
import java.util.List;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.metadata.MetadataGroup;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Carries a change through its phases on whichever node leads the metadata group, so a
 * change goes on when the node the operator asked, or the leader, dies (the next leader
 * takes over at its next poll): once every target reports its transfers complete and
 * durable, it proposes the handover; once the handover is applied, it proposes the
 * change's end. Each step is an entry of the metadata log, a compare-and-set on the epoch
 * ({@link MetadataGroup#propose}); a refused step is tried again at the next poll. On the
 * leader it also keeps the group's voters and listeners those of the ring
 * ({@link MetadataGroup#reconcilePeers}).
 */
final class ChangeDriver implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ChangeDriver.class);

	private final ClusterState state;

	private final MetadataGroup metadata;

	private final Transfers transfers;

	private final PeerClient peers;

	private final Duration callTimeout;

	private final Disposable ticker;

	private volatile boolean stepping;

	private volatile String lastProblem = "";

	ChangeDriver(ClusterState state, MetadataGroup metadata, Transfers transfers, PeerClient peers,
			Duration pollInterval, Duration callTimeout) {
		this.state = state;
		this.metadata = metadata;
		this.transfers = transfers;
		this.peers = peers;
		this.callTimeout = callTimeout;
		this.ticker = Flux.interval(pollInterval, Schedulers.parallel())
			.onBackpressureDrop()
			.subscribe((tick) -> tick());
	}

	private void tick() {
		if (this.stepping || !this.metadata.leads()) {
			return;
		}
		Ring ring = this.state.ring().orElse(null);
		RingChange change = (ring != null) ? ring.change() : null;
		this.stepping = true;
		Mono<Void> work = this.metadata.reconcilePeers()
			.then((change != null) ? step(ring, change) : Mono.<Void>empty());
		work.doFinally((signal) -> this.stepping = false).subscribe(null, (error) -> {
			String problem = String.valueOf(error.getMessage());
			if (!problem.equals(this.lastProblem)) {
				this.lastProblem = problem;
				logger.warn("Change " + ((change != null) ? change.id() : "-") + " waits: " + problem);
			}
		});
	}

	private Mono<Void> step(Ring ring, RingChange change) {
		Mono<Boolean> ready = (change.phase() == RingChange.Phase.STREAMING) ? transfersDone(ring) : Mono.just(true);
		return ready.flatMap((done) -> {
			if (!done) {
				return Mono.empty();
			}
			Ring next = ring.advance();
			return this.metadata.propose(ring.epoch(), next).flatMap((proposal) -> {
				if (!proposal.applied()) {
					return Mono.<Void>error(new IllegalStateException(
							"the next step was refused: " + proposal.reason() + " (epoch " + proposal.epoch() + ")"));
				}
				logger.info("Change " + change.id() + ": " + ((next.change() != null)
						? "handed over (reads go to the new owners)" : "finished at epoch " + next.epoch()));
				return Mono.<Void>empty();
			});
		});
	}

	/** Whether every target of the change reports its transfers complete. */
	private Mono<Boolean> transfersDone(Ring ring) {
		RingLayout layout = this.state.layout();
		if (layout == null || layout.ring() != ring) {
			return Mono.just(false);
		}
		List<Node> targets = new TransferPlan(layout).targets();
		String changeId = ring.change().id();
		return Flux.fromIterable(targets).concatMap((target) -> done(target, changeId)).all((done) -> done);
	}

	private Mono<Boolean> done(Node target, String changeId) {
		if (target.id().equals(this.state.self().id())) {
			return Mono.just(isDone(this.transfers.status(), changeId));
		}
		return RingCalls.get(this.peers, target, InternalApi.TRANSFERS_PATH, this.callTimeout).map((reply) -> {
			if (!reply.ok()) {
				throw new IllegalStateException(target + " answered " + reply.status() + ": " + reply.body());
			}
			JsonNode status = JsonMapper.shared().readTree(reply.body());
			return changeId.equals(status.path("change").asString("")) && status.path("done").asBoolean(false);
		})
			.onErrorMap((error) -> new IllegalStateException(
					"cannot learn the progress of " + target + ": " + error.getMessage(), error));
	}

	private static boolean isDone(java.util.Map<String, Object> status, String changeId) {
		return changeId.equals(status.get("change")) && Boolean.TRUE.equals(status.get("done"));
	}

	@Override
	public void close() {
		this.ticker.dispose();
	}

}
