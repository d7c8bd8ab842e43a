package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseCookie;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.CollectionUtils;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * A whole answer held in memory: a status, an optional body with its content type, and
 * whether the client should retry after a second. It is a {@link ServerResponse} that
 * writes its bytes straight to the exchange's response, without a lookup of message
 * writers or an encoder per request; most of the node's answers are one of a few constant
 * replies or a stored value.
 *
 * @param status the status code
 * @param contentType the body's media type, or null when there is no body
 * @param body the body, empty when there is none
 * @param retryAfter whether to send {@code Retry-After: 1}
 * @param etag the {@code ETag} to send (quoted), or null for none
 */
record Reply(HttpStatusCode status, @Nullable MediaType contentType, byte[] body, boolean retryAfter,
		@Nullable String etag) implements ServerResponse {

	private static final byte[] EMPTY = new byte[0];

	private static final MultiValueMap<String, ResponseCookie> NO_COOKIES = CollectionUtils
		.unmodifiableMultiValueMap(new LinkedMultiValueMap<>());

	static final Reply CREATED = empty(HttpStatus.CREATED);

	static final Reply ACCEPTED = empty(HttpStatus.ACCEPTED);

	static Reply empty(HttpStatusCode status) {
		return new Reply(status, null, EMPTY, false, null);
	}

	/** A plain-text body: {@code message} and a newline. */
	static Reply text(HttpStatusCode status, String message) {
		return new Reply(status, MediaType.TEXT_PLAIN, (message + "\n").getBytes(StandardCharsets.UTF_8), false, null);
	}

	/** A 503 the client should retry after a second. */
	static Reply retryLater(String message) {
		return new Reply(HttpStatus.SERVICE_UNAVAILABLE, MediaType.TEXT_PLAIN,
				(message + "\n").getBytes(StandardCharsets.UTF_8), true, null);
	}

	/** A JSON body. */
	static Reply json(HttpStatusCode status, String json) {
		return new Reply(status, MediaType.APPLICATION_JSON, json.getBytes(StandardCharsets.UTF_8), false, null);
	}

	/** A 200 with binary content: a stored value, a batch answer. */
	static Reply binary(byte[] body) {
		return new Reply(HttpStatus.OK, MediaType.APPLICATION_OCTET_STREAM, body, false, null);
	}

	/** A 200 with a stored value and its version. */
	static Reply value(byte[] body, String etag) {
		return new Reply(HttpStatus.OK, MediaType.APPLICATION_OCTET_STREAM, body, false, etag);
	}

	/** A write applied: {@code status} with the written version as {@code ETag}. */
	static Reply written(HttpStatusCode status, String etag) {
		return new Reply(status, null, EMPTY, false, etag);
	}

	/** A 412: the condition failed on the version {@code etag} (null: no entry). */
	static Reply preconditionFailed(@Nullable String etag) {
		return new Reply(HttpStatus.PRECONDITION_FAILED, MediaType.TEXT_PLAIN,
				"precondition failed: not applied\n".getBytes(StandardCharsets.UTF_8), false, etag);
	}

	/** A 304: the client's copy of the version {@code etag} is current. */
	static Reply notModified(String etag) {
		return new Reply(HttpStatus.NOT_MODIFIED, null, EMPTY, false, etag);
	}

	@Override
	public HttpStatusCode statusCode() {
		return this.status;
	}

	/**
	 * The headers {@link #writeTo} sets, built on demand (no one reads them per request).
	 */
	@Override
	public HttpHeaders headers() {
		HttpHeaders headers = new HttpHeaders();
		if (this.retryAfter) {
			headers.set(HttpHeaders.RETRY_AFTER, "1");
		}
		if (this.contentType != null) {
			headers.setContentType(this.contentType);
		}
		if (this.etag != null) {
			headers.set(HttpHeaders.ETAG, this.etag);
		}
		headers.setContentLength(this.body.length);
		return HttpHeaders.readOnlyHttpHeaders(headers);
	}

	@Override
	public MultiValueMap<String, ResponseCookie> cookies() {
		return NO_COOKIES;
	}

	@Override
	public Mono<Void> writeTo(ServerWebExchange exchange, Context context) {
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(this.status);
		HttpHeaders headers = response.getHeaders();
		if (this.retryAfter) {
			headers.set(HttpHeaders.RETRY_AFTER, "1");
		}
		if (this.contentType != null) {
			headers.setContentType(this.contentType);
		}
		if (this.etag != null) {
			headers.set(HttpHeaders.ETAG, this.etag);
		}
		if (this.status != HttpStatus.NOT_MODIFIED) {
			headers.setContentLength(this.body.length);
		}
		if (this.body.length == 0) {
			return response.setComplete();
		}
		return response.writeWith(Mono.just(response.bufferFactory().wrap(this.body)));
	}

}
