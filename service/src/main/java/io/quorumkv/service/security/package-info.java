/**
 * Who may use the public API and the admin operations: API keys and client certificates
 * through Spring Security for WebFlux, behind a gate that lets a request pass Spring
 * Security only when something it asks for is protected.
 */
@NullMarked
package io.quorumkv.service.security;

import org.jspecify.annotations.NullMarked;
