package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A whole answer to a public request, independent of the server layer that sends it: a
 * status, an optional body with its content type, and whether the client should retry
 * after a second. {@link #toNettyResponse()} is the response {@link EntityChannelHandler}
 * writes, {@link #writeTo} sends it through Reactor Netty ({@link DirectRoutes}),
 * {@link #toServerResponse()} hands it to WebFlux.
 *
 * @param status the status code
 * @param contentType the body's media type, or null when there is no body
 * @param body the body, empty when there is none
 * @param retryAfter whether to send {@code Retry-After: 1}
 */
record Reply(int status, @Nullable MediaType contentType, byte[] body, boolean retryAfter) {

	private static final byte[] EMPTY = new byte[0];

	private static final AsciiString RETRY_AFTER_ONE = AsciiString.cached("1");

	private static final AsciiString LENGTH_ZERO = AsciiString.cached("0");

	private static final AsciiString OCTET_STREAM = AsciiString.cached(MediaType.APPLICATION_OCTET_STREAM.toString());

	private static final AsciiString TEXT_PLAIN = AsciiString.cached(MediaType.TEXT_PLAIN.toString());

	/** The headers are set here from known names and values: no check of each. */
	private static final DefaultHttpHeadersFactory HEADERS = DefaultHttpHeadersFactory.headersFactory()
		.withValidation(false);

	private static final DefaultHttpHeadersFactory TRAILERS = DefaultHttpHeadersFactory.trailersFactory()
		.withValidation(false);

	static final Reply CREATED = empty(HttpStatus.CREATED);

	static final Reply ACCEPTED = empty(HttpStatus.ACCEPTED);

	static Reply empty(HttpStatusCode status) {
		return new Reply(status.value(), null, EMPTY, false);
	}

	/** A plain-text body: {@code message} and a newline. */
	static Reply text(HttpStatusCode status, String message) {
		return new Reply(status.value(), MediaType.TEXT_PLAIN, (message + "\n").getBytes(StandardCharsets.UTF_8),
				false);
	}

	/** A 503 the client should retry after a second. */
	static Reply retryLater(String message) {
		return new Reply(HttpStatus.SERVICE_UNAVAILABLE.value(), MediaType.TEXT_PLAIN,
				(message + "\n").getBytes(StandardCharsets.UTF_8), true);
	}

	/** A 200 with binary content: a stored value, a batch answer. */
	static Reply binary(byte[] body) {
		return new Reply(HttpStatus.OK.value(), MediaType.APPLICATION_OCTET_STREAM, body, false);
	}

	/** Sends this reply as the whole response. */
	Mono<Void> writeTo(HttpServerResponse response) {
		response.status(this.status);
		if (this.retryAfter) {
			response.header(HttpHeaderNames.RETRY_AFTER, RETRY_AFTER_ONE);
		}
		if (this.contentType != null) {
			response.header(HttpHeaderNames.CONTENT_TYPE, this.contentType.toString());
		}
		if (this.body.length == 0) {
			return response.header(HttpHeaderNames.CONTENT_LENGTH, LENGTH_ZERO).send().then();
		}
		response.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(this.body.length));
		return response.sendByteArray(Mono.just(this.body)).then();
	}

	/**
	 * This reply as one whole HTTP/1.1 response with the same headers as {@link #writeTo}
	 * sends; its content wraps the body without a copy.
	 */
	FullHttpResponse toNettyResponse() {
		DefaultFullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
				HttpResponseStatus.valueOf(this.status),
				(this.body.length == 0) ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(this.body), HEADERS, TRAILERS);
		if (this.retryAfter) {
			response.headers().set(HttpHeaderNames.RETRY_AFTER, RETRY_AFTER_ONE);
		}
		if (this.contentType != null) {
			response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentTypeHeader(this.contentType));
		}
		response.headers()
			.set(HttpHeaderNames.CONTENT_LENGTH,
					(this.body.length == 0) ? LENGTH_ZERO : AsciiString.of(Integer.toString(this.body.length)));
		return response;
	}

	private static CharSequence contentTypeHeader(MediaType type) {
		if (type == MediaType.APPLICATION_OCTET_STREAM) {
			return OCTET_STREAM;
		}
		return (type == MediaType.TEXT_PLAIN) ? TEXT_PLAIN : type.toString();
	}

	/**
	 * Sends this reply as the whole response from a WebFlux filter, which answers before
	 * any handler runs.
	 */
	Mono<Void> writeTo(ServerHttpResponse response) {
		response.setStatusCode(HttpStatusCode.valueOf(this.status));
		if (this.retryAfter) {
			response.getHeaders().set(HttpHeaders.RETRY_AFTER, "1");
		}
		if (this.contentType == null) {
			return response.setComplete();
		}
		response.getHeaders().setContentType(this.contentType);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(this.body)));
	}

	Mono<ServerResponse> toServerResponse() {
		ServerResponse.BodyBuilder builder = ServerResponse.status(this.status);
		if (this.retryAfter) {
			builder.header(HttpHeaders.RETRY_AFTER, "1");
		}
		if (this.contentType == null) {
			return builder.build();
		}
		return builder.contentType(this.contentType).bodyValue(this.body);
	}

}
