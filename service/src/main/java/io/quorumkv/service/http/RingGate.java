package io.quorumkv.service.http;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.membership.RingSync;
import io.quorumkv.service.peer.InternalApi;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Checks the ring of every internal data call ({@code X-QuorumKV-Ring},
 * {@link RingStamp}) before it is served, and stamps the answer with this node's ring:
 * <ul>
 * <li>a caller of another cluster is refused (409), with a log line saying so;</li>
 * <li>a caller ahead makes this node fetch the newer ring from it first (a 503 when that
 * fails): no node serves a call under a ring older than its caller's;</li>
 * <li>a caller behind is refused (409): its request was placed under an older ring, and
 * the answer's stamp makes it catch up;</li>
 * <li>a call without a stamp (an operator's tool) is served as it is.</li>
 * </ul>
 * A node without a ring (a newcomer waiting to be joined) takes the caller's ring when it
 * lists this node, as a node behind does: the members adopt the ring of the change that
 * brings it in as the change's commit reaches them, a moment before it reaches the
 * newcomer, and write to it at once. Otherwise it serves no data call (a 503).
 */
@Component
class RingGate implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	private static final Log logger = LogFactory.getLog(RingGate.class);

	private static final long LOG_EVERY_NANOS = 60_000_000_000L;

	private final ClusterState state;

	private final RingSync sync;

	private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

	RingGate(ClusterState state, RingSync sync) {
		this.state = state;
		this.sync = sync;
	}

	@Override
	public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
		String mine = this.state.stamp();
		if (mine != null) {
			request.exchange().getResponse().getHeaders().set(InternalApi.RING, mine);
		}
		String header = request.headers().firstHeader(InternalApi.RING);
		if (header == null) {
			return next.handle(request);
		}
		RingStamp caller = RingStamp.parse(header);
		if (caller == null) {
			return Mono.just(Reply.text(HttpStatus.BAD_REQUEST, "malformed " + InternalApi.RING));
		}
		if (mine == null) {
			return caughtUp(caller, request, next, "this node is not a member of a cluster yet and could not take"
					+ " the ring of the caller's epoch " + caller.epoch());
		}
		String cluster = this.state.ring().map((ring) -> ring.clusterId()).orElse("");
		if (!caller.clusterId().equals(cluster)) {
			String reason = "refused a call from " + caller.url() + " (node " + caller.nodeId() + ") of cluster "
					+ caller.clusterId() + ": this node belongs to cluster " + cluster;
			logOnce(caller.nodeId(), reason);
			return Mono.just(Reply.text(HttpStatus.CONFLICT, reason));
		}
		long epoch = this.state.epoch();
		if (caller.epoch() > epoch) {
			return caughtUp(caller, request, next,
					"this node is behind the caller's epoch " + caller.epoch() + " and could not catch up");
		}
		if (caller.epoch() < epoch) {
			return Mono.just(Reply.text(HttpStatus.CONFLICT,
					"stale ring: the call is of epoch " + caller.epoch() + ", this node serves epoch " + epoch));
		}
		return next.handle(request);
	}

	/**
	 * Serves the call once this node has the caller's ring (fetched from the caller); a
	 * 503 saying {@code failure} and why when it could not get it.
	 */
	private Mono<ServerResponse> caughtUp(RingStamp caller, ServerRequest request, HandlerFunction<ServerResponse> next,
			String failure) {
		return this.sync.catchUp(caller.node(), caller.epoch()).then(Mono.defer(() -> {
			String now = this.state.stamp();
			if (now != null) {
				request.exchange().getResponse().getHeaders().set(InternalApi.RING, now);
			}
			return next.handle(request);
		})).onErrorResume((error) -> Mono.just(Reply.retryLater(failure + ": " + error.getMessage())));
	}

	private void logOnce(String key, String line) {
		long now = System.nanoTime();
		Long last = this.lastLogged.get(key);
		if (last == null || now - last > LOG_EVERY_NANOS) {
			this.lastLogged.put(key, now);
			logger.warn(line);
		}
	}

}
