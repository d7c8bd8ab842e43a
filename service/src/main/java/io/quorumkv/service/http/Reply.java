package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * A whole answer to a public request, independent of the server layer that sends it: a
 * status, an optional body with its content type, and whether the client should retry
 * after a second. {@link EntityRoute} writes it straight to Reactor Netty,
 * {@link #toServerResponse()} hands it to WebFlux.
 *
 * @param status the status code
 * @param contentType the body's media type, or null when there is no body
 * @param body the body, empty when there is none
 * @param retryAfter whether to send {@code Retry-After: 1}
 */
record Reply(int status, @Nullable MediaType contentType, byte[] body, boolean retryAfter) {

	private static final byte[] EMPTY = new byte[0];

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

	/** A stored value, sent as it is. */
	static Reply value(byte[] value) {
		return new Reply(HttpStatus.OK.value(), MediaType.APPLICATION_OCTET_STREAM, value, false);
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
