package io.quorumkv.service.http;

import org.springframework.test.context.TestPropertySource;

/**
 * The whole public API with {@code /v0/entity} served by the direct Reactor Netty route
 * instead of {@link EntityChannelHandler}: both must answer the same.
 */
@TestPropertySource(properties = "quorumkv.http.direct-channel=false")
class ReactorNettyRouteEntityApiTest extends EntityApiTest {

}
