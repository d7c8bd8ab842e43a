package io.quorumkv.service.ops;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * {@code GET /v0/openapi.yaml}: the OpenAPI 3 description of the node's HTTP API, the
 * repository's {@code docs/openapi.yaml} as copied into the jar by the build.
 */
@Configuration(proxyBeanMethods = false)
public class OpenApiRoutes {

	/** Where the build puts the document on the class path. */
	public static final String LOCATION = "openapi/openapi.yaml";

	/** The path the node serves it at. */
	public static final String PATH = "/v0/openapi.yaml";

	@Bean
	RouterFunction<ServerResponse> openApiRouter() {
		Resource document = new ClassPathResource(LOCATION);
		MediaType yaml = MediaType.parseMediaType("application/yaml");
		return RouterFunctions.route()
			.GET(PATH,
					(request) -> ServerResponse.ok()
						.contentType(yaml)
						.cacheControl(CacheControl.noCache())
						.bodyValue(document))
			.build();
	}

}
