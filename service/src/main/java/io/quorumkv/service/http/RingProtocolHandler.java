package io.quorumkv.service.http;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.membership.Membership;
import io.quorumkv.service.membership.RingSync;
import io.quorumkv.service.metadata.Liveness;
import io.quorumkv.service.metadata.RaftEndpoint;
import io.quorumkv.service.peer.InternalApi;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The ring protocol's calls between nodes that are not the ring itself: who a node is
 * ({@code GET /internal/v0/ring/identity}), a node asking to be joined
 * ({@code POST /internal/v0/ring/join}), and the metadata layer's Raft calls ({@code POST
 * /internal/v0/raft/{kind}}), handed to this node's {@link RaftEndpoint}.
 */
@Component
class RingProtocolHandler {

	/**
	 * A Raft call: a batch of entries or a snapshot chunk (the group keeps both small).
	 */
	private static final int MAX_RAFT_MESSAGE = 4 << 20;

	private final ClusterState state;

	private final BodyBudget bodies;

	private final RaftEndpoint raft;

	private final Membership membership;

	private final Liveness liveness;

	private final RingSync sync;

	RingProtocolHandler(ClusterState state, BodyBudget bodies, RaftEndpoint raft, Membership membership,
			Liveness liveness, RingSync sync) {
		this.state = state;
		this.sync = sync;
		this.liveness = liveness;
		this.bodies = bodies;
		this.raft = raft;
		this.membership = membership;
	}

	/**
	 * {@code POST /internal/v0/ring/join?url=U}: a node waiting to be joined
	 * ({@code auto-join}) asks this member to join it; answered as the operator's
	 * {@code join} is (200 with the change, 409 with the reason, 400), 503 when the
	 * metadata log does not answer.
	 */
	Mono<ServerResponse> join(ServerRequest request) {
		String url = QueryParameters.parse(request.uri().getRawQuery()).text("url");
		if (url == null || url.isBlank()) {
			return Mono.just(Reply.text(HttpStatus.BAD_REQUEST, "url is required: the URL of the node to join"));
		}
		return this.membership.join(url, null)
			.map((answer) -> (ServerResponse) Reply.json(HttpStatus.valueOf(answer.status()),
					JsonMapper.shared().writeValueAsString(answer.body())))
			.onErrorResume((error) -> Mono.just(Reply.text(HttpStatus.SERVICE_UNAVAILABLE,
					"join of " + url + " not asked: " + error.getMessage())));
	}

	/**
	 * {@code POST /internal/v0/raft/{kind}}: one Raft call, answered with the serialized
	 * reply; 404 for an unknown kind, 400 for a body that is not its message, 503 (with
	 * the reason) when this node's Raft server cannot answer it. A leader's append
	 * carries its view of who is up ({@link Liveness}), learned here.
	 */
	Mono<ServerResponse> raft(ServerRequest request) {
		String kind = request.pathVariable("kind");
		String view = request.headers().firstHeader(Liveness.HEADER);
		String from = request.headers().firstHeader(InternalApi.FROM);
		if (view != null && from != null) {
			this.liveness.learn(from, view);
		}
		return this.bodies
			.read(request, MAX_RAFT_MESSAGE,
					(bytes) -> this.raft.handle(kind, bytes).map((answer) -> (ServerResponse) Reply.binary(answer)))
			.doOnError(RaftEndpoint::forAnotherGroup, (error) -> catchUpIfAhead(request))
			.onErrorResume(RaftEndpoint.BadCall.class,
					(bad) -> Mono.just(Reply.text(bad.unknownKind() ? HttpStatus.NOT_FOUND : HttpStatus.BAD_REQUEST,
							bad.getMessage())))
			.onErrorResume(ApiException.class, ErrorResponses::toResponse)
			.onErrorResume((error) -> !(error instanceof ApiException), (error) -> Mono
				.just(Reply.text(HttpStatus.SERVICE_UNAVAILABLE, String.valueOf(error.getMessage()))));
	}

	/**
	 * A Raft call for a group this node does not hold, from a node whose ring is newer,
	 * comes from the group of a newer generation (a forced reconfiguration formed it):
	 * this node takes that ring (ring exchange), and its Raft server moves to that group.
	 * A caller of an older generation is not followed (its ring is refused).
	 */
	private void catchUpIfAhead(ServerRequest request) {
		RingStamp caller = RingStamp.parse(request.headers().firstHeader(InternalApi.RING));
		if (caller != null && this.state.ring().isPresent() && caller.epoch() > this.state.epoch()) {
			this.sync.catchUp(caller.node(), caller.epoch()).subscribe(null, (error) -> {
			});
		}
	}

	/**
	 * {@code GET /internal/v0/ring/identity}:
	 * {@code {"id":…,"url":…,"clusterId":…|null,"epoch":n}}.
	 */
	Mono<ServerResponse> identity(ServerRequest request) {
		ObjectNode root = JsonMapper.shared().createObjectNode();
		root.put("id", this.state.self().id());
		root.put("url", this.state.self().base());
		Ring ring = this.state.ring().orElse(null);
		if (ring != null) {
			root.put("clusterId", ring.clusterId());
		}
		else {
			root.putNull("clusterId");
		}
		root.put("epoch", this.state.epoch());
		return Mono.just(Reply.json(HttpStatus.OK, root.toString()));
	}

}
