package io.quorumkv.service.http;

import org.springframework.test.context.TestPropertySource;

/**
 * The keep-alive cases of {@link KeepAliveAfterRefusalTest} with {@code /v0/entity}
 * served by the direct Reactor Netty route instead of {@link EntityChannelHandler}.
 */
@TestPropertySource(properties = "quorumkv.http.direct-channel=false")
class ReactorNettyRouteKeepAliveAfterRefusalTest extends KeepAliveAfterRefusalTest {

}
