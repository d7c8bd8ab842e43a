package io.quorumkv.service.http;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.ClockSkewException;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.security.InternalAuth;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The replica side of the internal API's range reads ({@link InternalApi}): pages of this
 * node's entries, tombstones included. Replica reads and writes travel on the replica
 * streams instead ({@link ReplicaStreamHandler}). The secret is checked before any of
 * this runs ({@link InternalAuth}).
 */
@Component
class InternalHandler {

	private final Storage storage;

	private final int maxKeySize;

	InternalHandler(Storage storage, HttpProperties limits) {
		this.storage = storage;
		this.maxKeySize = (int) limits.maxKeySize().toBytes();
	}

	/** The calling node as it names itself, or its address. */
	static String sender(ServerRequest request) {
		String from = request.headers().firstHeader(InternalApi.FROM);
		return (from != null) ? from : request.remoteAddress().map(Object::toString).orElse("an unknown peer");
	}

	/**
	 * A page of a range read: this node's entries from {@code start} to {@code end}, at
	 * most {@code limit} (none when absent). {@code start} may be one byte over the key
	 * limit: a page after a key of the largest size starts at that key plus a zero byte.
	 */
	Mono<ServerResponse> scan(ServerRequest request) {
		return Mono.defer(() -> {
			QueryParameters query = QueryParameters.parse(request.uri().getRawQuery());
			byte[] start = query.key("start", this.maxKeySize + 1);
			byte[] end = query.optionalKey("end", this.maxKeySize);
			long limit = EntityHandler.limit(query.text("limit"));
			Flux<Entry> entries = this.storage.scan(start, end);
			return ServerResponse.ok()
				.contentType(MediaType.APPLICATION_OCTET_STREAM)
				.body(BodyInserters.fromDataBuffers(((limit < Long.MAX_VALUE) ? entries.take(limit, true) : entries)
					.map((entry) -> DefaultDataBufferFactory.sharedInstance.wrap(EntryFrame.encode(entry)))));
		}).onErrorResume(ErrorResponses::toResponse);
	}

}
