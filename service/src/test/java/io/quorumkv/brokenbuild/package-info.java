/**
 * Deliberately broken builds for the nemesis suite's test of its tests
 * ({@code BrokenBuildIT}): never part of the service. {@code BrokenBuildJar} packs these
 * classes with an auto-configuration entry into a jar that a node puts on its class path
 * through Spring Boot's PropertiesLauncher ({@code -Dloader.path}); only then, and only
 * with {@code quorumkv.test.broken-mode-file} set, does the node's storage misbehave. The
 * package is outside {@code io.quorumkv.service} so that component scanning of the in-JVM
 * tests never finds it.
 */
@NullMarked
package io.quorumkv.brokenbuild;

import org.jspecify.annotations.NullMarked;
