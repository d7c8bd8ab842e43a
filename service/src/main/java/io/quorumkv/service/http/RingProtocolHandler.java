package io.quorumkv.service.http;

import io.quorumkv.service.membership.Participant;
import io.quorumkv.service.metadata.RaftEndpoint;
import io.quorumkv.service.membership.Vote;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The agreement's messages between nodes ({@code /internal/v0/ring/...}), handed to this
 * node's {@link Participant}. A refusal is a 409 whose text says why; a message that is
 * not valid JSON of its kind is a 400.
 */
@Component
class RingProtocolHandler {

	/** A ring message is small: a ring of a few hundred nodes. */
	private static final int MAX_MESSAGE = 1 << 20;

	/**
	 * A Raft call: a batch of entries or a snapshot chunk (the group keeps both small).
	 */
	private static final int MAX_RAFT_MESSAGE = 4 << 20;

	private final Participant participant;

	private final BodyBudget bodies;

	private final RaftEndpoint raft;

	RingProtocolHandler(Participant participant, BodyBudget bodies, RaftEndpoint raft) {
		this.participant = participant;
		this.bodies = bodies;
		this.raft = raft;
	}

	/**
	 * {@code POST /internal/v0/raft/{kind}}: one Raft call, answered with the serialized
	 * reply; 404 for an unknown kind, 400 for a body that is not its message, 503 (with
	 * the reason) when this node's Raft server cannot answer it.
	 */
	Mono<ServerResponse> raft(ServerRequest request) {
		String kind = request.pathVariable("kind");
		return this.bodies
			.read(request, MAX_RAFT_MESSAGE,
					(bytes) -> this.raft.handle(kind, bytes).map((answer) -> (ServerResponse) Reply.binary(answer)))
			.onErrorResume(RaftEndpoint.BadCall.class,
					(bad) -> Mono.just(Reply.text(bad.unknownKind() ? HttpStatus.NOT_FOUND : HttpStatus.BAD_REQUEST,
							bad.getMessage())))
			.onErrorResume(ApiException.class, ErrorResponses::toResponse)
			.onErrorResume((error) -> !(error instanceof ApiException), (error) -> Mono
				.just(Reply.text(HttpStatus.SERVICE_UNAVAILABLE, String.valueOf(error.getMessage()))));
	}

	Mono<ServerResponse> prepare(ServerRequest request) {
		return body(request, (json) -> this.participant.prepareMessage(json).map((vote) -> switch (vote) {
			case Vote.Accepted accepted -> json(HttpStatus.OK, "{\"vote\":\"accepted\"}");
			case Vote.Refused refused -> Reply.text(HttpStatus.CONFLICT, refused.reason());
		}));
	}

	Mono<ServerResponse> commit(ServerRequest request) {
		return body(request,
				(json) -> this.participant.commitMessage(json).thenReturn(json(HttpStatus.OK, "{\"committed\":true}")));
	}

	Mono<ServerResponse> abort(ServerRequest request) {
		return body(request,
				(json) -> this.participant.abortMessage(json).thenReturn(json(HttpStatus.OK, "{\"aborted\":true}")));
	}

	Mono<ServerResponse> outcome(ServerRequest request) {
		return Mono.defer(() -> {
			String id = QueryParameters.parse(request.uri().getRawQuery()).text("id");
			if (id == null || id.isBlank()) {
				throw ApiException.badRequest("missing id");
			}
			return this.participant.outcomeMessage(id).map((json) -> json(HttpStatus.OK, json));
		}).onErrorResume(ErrorResponses::toResponse);
	}

	Mono<ServerResponse> identity(ServerRequest request) {
		return Mono.just(json(HttpStatus.OK, this.participant.identityMessage()));
	}

	private Mono<ServerResponse> body(ServerRequest request,
			java.util.function.Function<String, Mono<ServerResponse>> handler) {
		return this.bodies
			.read(request, MAX_MESSAGE,
					(bytes) -> handler.apply(new String(bytes, java.nio.charset.StandardCharsets.UTF_8)))
			.onErrorMap(JacksonException.class,
					(ex) -> ApiException.badRequest("malformed message: " + ex.getMessage()))
			.onErrorMap(IllegalArgumentException.class,
					(ex) -> ApiException.badRequest("malformed message: " + ex.getMessage()))
			.onErrorResume(ErrorResponses::toResponse);
	}

	private static ServerResponse json(HttpStatus status, String body) {
		return Reply.json(status, body);
	}

}
