package io.quorumkv.service.http;

import org.springframework.test.context.TestPropertySource;

/**
 * The whole public API on a node whose storage is Derby (without an fsync per commit, so
 * that the 20,000-key range test stays quick; durability is the crash kit's concern).
 */
@TestPropertySource(properties = { "quorumkv.storage.backend=derby", "quorumkv.storage.derby.durability=no-sync" })
class DerbyEntityApiTest extends EntityApiTest {

}
