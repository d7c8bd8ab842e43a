package io.quorumkv.service.http;

import org.springframework.test.context.TestPropertySource;

/**
 * The whole public API with {@code /v0/entity} served by WebFlux instead of the direct
 * Reactor Netty route: both paths must answer the same.
 */
@TestPropertySource(properties = "quorumkv.http.direct-route=false")
class WebFluxEntityApiTest extends EntityApiTest {

}
