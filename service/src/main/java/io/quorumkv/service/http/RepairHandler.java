package io.quorumkv.service.http;

import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.StreamProperties;
import io.quorumkv.service.repair.RepairService;
import io.quorumkv.service.repair.RepairSessions;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The replica side of anti-entropy repair on the internal API
 * ({@code /internal/v0/repair/...}): bodies read whole within the body budget and handed
 * to {@link RepairSessions}; a malformed body is a 400, an unknown session a 404, a
 * repair while a membership change is under way a 409, too many sessions a 503.
 */
@Component
class RepairHandler {

	private final RepairSessions sessions;

	private final BodyBudget bodies;

	private final int maxBody;

	RepairHandler(RepairSessions sessions, BodyBudget bodies, HttpProperties limits, StreamProperties stream) {
		this.sessions = sessions;
		this.bodies = bodies;
		this.maxBody = InternalApi.maxFrame(stream, (int) limits.maxBodySize().toBytes());
	}

	/**
	 * {@code ?scope=primary|all} (default all); the repairing node is the caller named by
	 * {@code X-QuorumKV-From}.
	 */
	Mono<ServerResponse> trees(ServerRequest request) {
		return answered(Mono.defer(() -> {
			String repairer = repairer(request);
			RepairService.Scope parsed = scope(request);
			return this.bodies.read(request, this.maxBody,
					(body) -> this.sessions.trees(body, repairer, parsed).<ServerResponse>map(Reply::binary));
		}));
	}

	/** {@code ?scope=primary|all}, all by default. */
	private static RepairService.Scope scope(ServerRequest request) {
		String scope = QueryParameters.parse(request.uri().getRawQuery()).text("scope");
		if (scope == null || scope.equals("all")) {
			return RepairService.Scope.ALL;
		}
		if (scope.equals("primary")) {
			return RepairService.Scope.PRIMARY;
		}
		throw ApiException.badRequest("scope must be primary or all");
	}

	private static String repairer(ServerRequest request) {
		String from = request.headers().firstHeader(InternalApi.FROM);
		if (from == null || from.isBlank()) {
			throw ApiException.badRequest("a repair call names its node in " + InternalApi.FROM);
		}
		return from;
	}

	Mono<ServerResponse> nodes(ServerRequest request) {
		return answered(this.bodies.read(request, this.maxBody,
				(body) -> Mono.fromCallable(() -> Reply.binary(this.sessions.nodes(body)))));
	}

	Mono<ServerResponse> digests(ServerRequest request) {
		return answered(this.bodies.read(request, this.maxBody,
				(body) -> ServerResponse.ok()
					.contentType(MediaType.APPLICATION_OCTET_STREAM)
					.body(BodyInserters.fromDataBuffers(
							this.sessions.digests(body).map(DefaultDataBufferFactory.sharedInstance::wrap)))));
	}

	Mono<ServerResponse> done(ServerRequest request) {
		return answered(Mono.defer(() -> this.bodies.read(request, this.maxBody,
				(body) -> this.sessions.done(body, repairer(request), scope(request))
					.then(Mono.fromSupplier(() -> Reply.empty(HttpStatus.NO_CONTENT))))));
	}

	Mono<ServerResponse> end(ServerRequest request) {
		return answered(Mono.fromCallable(() -> {
			String id = QueryParameters.parse(request.uri().getRawQuery()).text("id");
			if (id == null) {
				throw ApiException.badRequest("missing id");
			}
			this.sessions.end(id);
			return Reply.empty(HttpStatus.NO_CONTENT);
		}));
	}

	private static Mono<ServerResponse> answered(Mono<? extends ServerResponse> response) {
		return response.<ServerResponse>map((answer) -> answer)
			.onErrorMap(IllegalArgumentException.class, (ex) -> ApiException.badRequest(ex.getMessage()))
			.onErrorMap(RepairSessions.UnknownSessionException.class,
					(ex) -> new ApiException(HttpStatus.NOT_FOUND, ex.getMessage()))
			.onErrorMap(RepairService.RepairRefusedException.class,
					(ex) -> new ApiException(HttpStatus.CONFLICT, ex.getMessage()))
			.onErrorResume(ErrorResponses::toResponse);
	}

}
