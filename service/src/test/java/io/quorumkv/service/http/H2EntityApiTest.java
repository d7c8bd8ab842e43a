package io.quorumkv.service.http;

import org.springframework.test.context.TestPropertySource;

/** The whole public API on a node whose storage is H2. */
@TestPropertySource(properties = "quorumkv.storage.backend=h2")
class H2EntityApiTest extends EntityApiTest {

}
