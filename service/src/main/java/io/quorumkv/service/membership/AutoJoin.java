package io.quorumkv.service.membership;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A node started without a ring and with {@code quorumkv.cluster.membership.auto-join}
 * asks the nodes it was given ({@code quorumkv.cluster.nodes}) to join it, one after the
 * other, every poll interval, until one agrees; then it waits for the ring that adds it
 * (from the metadata log, as after an operator's {@code join}) and stops. A refusal that
 * cannot change (another cluster's node) is logged and asked again, slowly: the operator
 * may wipe the data folder meanwhile. This is how a new pod of a StatefulSet that scales
 * up becomes a member without a manual step.
 */
final class AutoJoin implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(AutoJoin.class);

	/** After a member agreed: how long to wait for the ring before asking again. */
	private static final Duration AGREED_WAIT = Duration.ofSeconds(30);

	private final ClusterState state;

	private final PeerClient peers;

	private final List<Node> seeds;

	private final Duration interval;

	private final Duration callTimeout;

	private final AtomicInteger next = new AtomicInteger();

	private volatile long quietUntil;

	private volatile @Nullable String lastProblem;

	private volatile @Nullable Disposable ticker;

	AutoJoin(ClusterState state, PeerClient peers, List<Node> seeds, Duration interval, Duration callTimeout) {
		this.state = state;
		this.peers = peers;
		this.seeds = List.copyOf(seeds);
		this.interval = interval;
		this.callTimeout = callTimeout;
	}

	/** Starts asking, if this node has no ring and was given nodes to ask. */
	synchronized void start() {
		if (this.ticker != null || this.state.ring().isPresent()) {
			return;
		}
		if (this.seeds.isEmpty()) {
			logger.warn("auto-join is on but quorumkv.cluster.nodes names no other node to ask");
			return;
		}
		logger.info("auto-join: asking " + this.seeds.stream().map(Node::base).toList() + " to join this node ("
				+ this.state.self().base() + ")");
		this.ticker = Flux.interval(Duration.ZERO, this.interval, Schedulers.parallel())
			.onBackpressureDrop()
			.concatMap((tick) -> ask(), 1)
			.takeUntil((member) -> member)
			.subscribe(null, (error) -> logger.warn("auto-join stopped: " + error));
	}

	/** One attempt; true once this node has a ring (nothing more to ask). */
	private Mono<Boolean> ask() {
		if (this.state.ring().isPresent()) {
			logger.info("auto-join: this node has the ring that joins it (epoch " + this.state.epoch() + ")");
			return Mono.just(true);
		}
		if (System.nanoTime() < this.quietUntil) {
			return Mono.just(false);
		}
		Node seed = this.seeds.get(Math.floorMod(this.next.getAndIncrement(), this.seeds.size()));
		String query = "?url=" + URLEncoder.encode(this.state.self().base(), StandardCharsets.UTF_8);
		return RingCalls.post(this.peers, seed, InternalApi.RING_JOIN_PATH + query, this.callTimeout).map((reply) -> {
			if (reply.ok()) {
				logger.info("auto-join: " + seed.base() + " agreed to join this node: " + reply.body());
				this.quietUntil = System.nanoTime() + AGREED_WAIT.toNanos();
			}
			else {
				problem(seed.base() + " answered " + reply.status() + ": " + reply.body());
			}
			return false;
		}).onErrorResume((error) -> {
			problem(seed.base() + " did not answer: " + error.getMessage());
			return Mono.just(false);
		});
	}

	/** Logs a problem once until it changes (a node asks every poll interval). */
	private void problem(String problem) {
		String reason = problem.replaceAll("\\d+", "#");
		if (!reason.equals(this.lastProblem)) {
			this.lastProblem = reason;
			logger.warn("auto-join: " + problem + "; asking again");
		}
	}

	@Override
	public synchronized void close() {
		Disposable current = this.ticker;
		if (current != null) {
			current.dispose();
			this.ticker = null;
		}
	}

}
