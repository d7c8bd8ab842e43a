package io.quorumkv.service.http;

import static org.springframework.web.reactive.function.server.RequestPredicates.path;

import io.quorumkv.service.replication.InternalApi;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Routes of the public API (any other method on a known path is a 405) and of the
 * internal one.
 */
@Configuration(proxyBeanMethods = false)
public class EntityRoutes {

	@Bean
	RouterFunction<ServerResponse> internalRouter(InternalHandler handler) {
		return RouterFunctions.route()
			.GET(InternalApi.ENTRY_PATH, handler::get)
			.PUT(InternalApi.ENTRY_PATH, handler::put)
			.GET(InternalApi.ENTRIES_PATH, handler::scan)
			.POST(InternalApi.BATCH_PATH, handler::batch)
			.build();
	}

	@Bean
	RouterFunction<ServerResponse> entityRouter(EntityHandler handler) {
		return RouterFunctions.route()
			.GET("/v0/status", handler::status)
			.GET("/v0/entity", handler::get)
			.PUT("/v0/entity", handler::put)
			.DELETE("/v0/entity", handler::delete)
			.GET("/v0/entities", handler::range)
			.route(path("/v0/entity").or(path("/v0/entities")).or(path("/v0/status")), handler::methodNotAllowed)
			.build();
	}

}
