/**
 * The contract kit: an abstract JUnit 5 test every backend extends, a reference model,
 * data builders, and a storage that forwards every call ({@code ForwardingStorage}) for
 * tests that change one. Shipped as this module's test-jar.
 */
@NullMarked
package io.quorumkv.storage.contract;

import org.jspecify.annotations.NullMarked;
