package io.quorumkv.service.http;

import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.server.ServerRequest;

/**
 * Reads a request body whole, up to a limit, and only if it arrived intact.
 *
 * <p>
 * When Reactor Netty fails to decode a body (a malformed chunk size, a chunk not ended by
 * CRLF, a bad chunk extension) it answers 400 itself and then <em>completes</em> the body
 * the handler reads, with whatever content came before the error (possibly none). A
 * handler that stored that body would write a truncated or empty value for a request the
 * client was told was refused. So after the body completes, a body whose response the
 * server has already sent is refused instead of returned.
 */
final class RequestBodies {

	private static final byte[] EMPTY = new byte[0];

	private RequestBodies() {
	}

	static Mono<byte[]> read(ServerRequest request, int maxSize) {
		return DataBufferUtils.join(request.body(BodyExtractors.toDataBuffers()), maxSize).map((buffer) -> {
			try {
				byte[] bytes = new byte[buffer.readableByteCount()];
				buffer.read(bytes);
				return bytes;
			}
			finally {
				DataBufferUtils.release(buffer);
			}
		})
			.defaultIfEmpty(EMPTY)
			.flatMap((bytes) -> answeredByServer(request) ? Mono.error(MalformedBody.INSTANCE) : Mono.just(bytes));
	}

	/** Whether the server already answered (and refused) the request itself. */
	private static boolean answeredByServer(ServerRequest request) {
		Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request.exchange().getRequest());
		return nativeRequest instanceof HttpServerResponse response && response.hasSentHeaders();
	}

	/** The body could not be decoded; the server has answered 400 already. */
	static final class MalformedBody extends ApiException {

		static final MalformedBody INSTANCE = new MalformedBody();

		private MalformedBody() {
			super(org.springframework.http.HttpStatus.BAD_REQUEST, "malformed request body");
		}

	}

}
