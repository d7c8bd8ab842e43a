package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;

import reactor.core.publisher.Mono;

import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Answers an {@link ApiException} that ends a streamed answer before its first byte (a
 * malformed replica stream, say) as the handlers answer one: its status and a short text
 * body, never a 500. Once the answer has begun, nothing can change its status: the
 * connection closes. Runs before Spring Boot's error handler (order -1).
 */
@Component
@Order(-2)
class ApiExceptionHandler implements WebExceptionHandler {

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable error) {
		ServerHttpResponse response = exchange.getResponse();
		if (!(error instanceof ApiException api) || response.isCommitted()) {
			return Mono.error(error);
		}
		response.setStatusCode(api.status());
		response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
		byte[] body = (api.getMessage() + "\n").getBytes(StandardCharsets.UTF_8);
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
	}

}
