package io.quorumkv.service.http;

import java.util.Set;

import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The parameters an internal route reads, and no other: a call with any other parameter,
 * or one given twice, is a 400 naming it before the route's handler runs, as on the
 * public routes ({@link QueryParameters}). It runs after the route's filters, so a caller
 * without the cluster's secret is refused before it learns anything of the parameters.
 */
final class InternalParameters {

	private InternalParameters() {
	}

	/**
	 * {@code next}, served only when its query holds no parameter outside {@code names}.
	 */
	static HandlerFunction<ServerResponse> only(HandlerFunction<ServerResponse> next, String... names) {
		Set<String> allowed = Set.of(names);
		return (request) -> {
			String query = request.uri().getRawQuery();
			if (query == null || query.isEmpty()) {
				return next.handle(request);
			}
			try {
				QueryParameters.parse(query)
					.allowOnly(allowed, request.method() + " " + request.requestPath().pathWithinApplication().value());
			}
			catch (ApiException refused) {
				return ErrorResponses.toResponse(refused);
			}
			return next.handle(request);
		};
	}

}
