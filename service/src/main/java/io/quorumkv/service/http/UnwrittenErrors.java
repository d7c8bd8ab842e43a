package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerResponse;

/**
 * Gives a body to the one error Spring answers without writing one: a request target that
 * is not a valid URI ({@code ?id=%ZZ} is one, a raw control byte another). Spring's
 * {@code ReactorHttpHandlerAdapter} sets 400 and ends without a body, before any filter
 * or handler of ours runs; Reactor Netty's {@code mapHandle} hook sees the request end
 * unwritten and sends the text. Every other answer has been written by then and passes
 * untouched.
 */
final class UnwrittenErrors {

	private static final byte[] BAD_TARGET = ("malformed request target: percent-encode every byte outside"
			+ " printable ASCII and every % not starting an escape (docs/api.md, Keys)\n")
		.getBytes(StandardCharsets.US_ASCII);

	private UnwrittenErrors() {
	}

	static Mono<Void> complete(Mono<Void> handled, Connection connection) {
		if (!(connection instanceof HttpServerResponse response)) {
			return handled;
		}
		return handled.then(Mono.defer(() -> {
			if (response.hasSentHeaders() || response.status().code() != HttpResponseStatus.BAD_REQUEST.code()) {
				return Mono.empty();
			}
			return response.header(HttpHeaderNames.CONTENT_TYPE, "text/plain")
				.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(BAD_TARGET.length))
				.send(Mono.just(Unpooled.wrappedBuffer(BAD_TARGET)))
				.then();
		}));
	}

}
