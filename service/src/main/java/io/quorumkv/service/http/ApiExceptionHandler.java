package io.quorumkv.service.http;

import reactor.core.publisher.Mono;

import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Answers every failure that reaches the web handler uncaught as the handlers answer
 * theirs: its status and a short text body ({@link ErrorResponses}), never Spring's JSON
 * error. That covers an {@link ApiException} that ends a streamed answer before its first
 * byte (a malformed replica stream, say), a path no route serves (404), and whatever else
 * Spring refuses before a handler runs. Once the answer has begun, nothing can change its
 * status: the connection closes. Runs before Spring Boot's error handler (order -1).
 */
@Component
@Order(-2)
class ApiExceptionHandler implements WebExceptionHandler {

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable error) {
		ServerHttpResponse response = exchange.getResponse();
		if (response.isCommitted()) {
			return Mono.error(error);
		}
		Reply reply = reply(exchange, error);
		response.setStatusCode(reply.status());
		HttpHeaders headers = response.getHeaders();
		if (reply.contentType() != null) {
			headers.setContentType(reply.contentType());
		}
		if (reply.retryAfter()) {
			headers.set(HttpHeaders.RETRY_AFTER, "1");
		}
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(reply.body())));
	}

	private static Reply reply(ServerWebExchange exchange, Throwable error) {
		if (error instanceof ResponseStatusException status && status.getStatusCode().value() == 404) {
			String path = exchange.getRequest().getPath().value();
			return Reply.text(HttpStatus.NOT_FOUND,
					"no such path: " + QueryParameters.printable(path) + " (the API is described at /v0/openapi.yaml)");
		}
		return ErrorResponses.toReply(error);
	}

}
