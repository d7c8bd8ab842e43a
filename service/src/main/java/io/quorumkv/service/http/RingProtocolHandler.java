package io.quorumkv.service.http;

import io.quorumkv.service.membership.Participant;
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

	private final Participant participant;

	private final BodyBudget bodies;

	RingProtocolHandler(Participant participant, BodyBudget bodies) {
		this.participant = participant;
		this.bodies = bodies;
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
