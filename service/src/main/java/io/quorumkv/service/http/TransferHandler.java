package io.quorumkv.service.http;

import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.membership.Membership;
import io.quorumkv.service.membership.TransferSource;
import io.quorumkv.service.membership.TransferSource.ChangeMismatchException;
import io.quorumkv.service.peer.InternalApi;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The streams of a membership change between nodes: {@code GET /internal/v0/transfer}
 * (the entries this node owes the caller, whose ring stamp names it, at most {@code rate}
 * bytes a second when the caller gives one), {@code GET /internal/v0/transfers} (this
 * node's own transfers, for the coordinator) and {@code GET /internal/v0/cleanup} (this
 * node's clean-up, for the member whose automatic clean-up comes after it).
 */
@Component
class TransferHandler {

	/** The highest {@code rate} a transfer may ask for (bytes a second): 1 TB. */
	static final long MAX_RATE = 1_000_000_000_000L;

	private final TransferSource source;

	private final Membership membership;

	private final int maxKeySize;

	TransferHandler(TransferSource source, Membership membership, HttpProperties limits) {
		this.source = source;
		this.membership = membership;
		this.maxKeySize = (int) limits.maxKeySize().toBytes();
	}

	Mono<ServerResponse> transfer(ServerRequest request) {
		return Mono.defer(() -> {
			RingStamp caller = RingStamp.parse(request.headers().firstHeader(InternalApi.RING));
			if (caller == null) {
				throw ApiException.badRequest("a transfer needs the caller's " + InternalApi.RING);
			}
			QueryParameters query = QueryParameters.parse(request.uri().getRawQuery());
			String change = query.text("change");
			if (change == null || change.isBlank()) {
				throw ApiException.badRequest("missing change");
			}
			byte[] start = query.optionalKey("start", this.maxKeySize + 1);
			String rateText = query.text("rate");
			Long rate = (rateText != null) ? QueryParameters.positive(rateText, MAX_RATE,
					"rate must be a whole number of bytes per second from 1 to " + MAX_RATE) : null;
			String onBehalfOf = query.text("for");
			return this.source.frames(change, caller.nodeId(), (start != null) ? start : new byte[0], rate, onBehalfOf)
				.switchOnFirst(
						(first, all) -> first.isOnError() ? Mono.error(first.getThrowable())
								: ServerResponse.ok()
									.contentType(MediaType.APPLICATION_OCTET_STREAM)
									.body(BodyInserters
										.fromDataBuffers(all.map(DefaultDataBufferFactory.sharedInstance::wrap))),
						false)
				.singleOrEmpty();
		})
			.onErrorResume(ChangeMismatchException.class,
					(mismatch) -> Mono.just(Reply.text(HttpStatus.CONFLICT, mismatch.getMessage())))
			.onErrorResume(ErrorResponses::toResponse);
	}

	Mono<ServerResponse> transfers(ServerRequest request) {
		return Mono.fromCallable(
				() -> Reply.json(HttpStatus.OK, JsonMapper.shared().writeValueAsString(this.membership.transfers())));
	}

	Mono<ServerResponse> cleanup(ServerRequest request) {
		return Mono.fromCallable(() -> Reply.json(HttpStatus.OK,
				JsonMapper.shared().writeValueAsString(this.membership.cleanupStatus())));
	}

}
