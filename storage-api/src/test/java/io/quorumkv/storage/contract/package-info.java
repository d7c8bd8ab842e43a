/**
 * The contract kit: an abstract JUnit 5 test every backend extends, a reference model,
 * and data builders. Shipped as this module's test-jar.
 */
@NullMarked
package io.quorumkv.storage.contract;

import org.jspecify.annotations.NullMarked;
