/**
 * The QuorumKV node: a Spring Boot WebFlux application serving the public API
 * ({@code .http}), placing keys on nodes ({@code .cluster}), coordinating replicas
 * ({@code .replication}), wiring configuration ({@code .config}) and exposing health and
 * metrics ({@code .ops}).
 */
@NullMarked
package io.quorumkv.service;

import org.jspecify.annotations.NullMarked;
