/**
 * Who may do what, in one place, with one entry per concern:
 * <ul>
 * <li>clients of the public API and of the admin operations: API keys and client
 * certificates through Spring Security for WebFlux, behind a gate that lets a request
 * pass Spring Security only when something it asks for is protected
 * ({@code SecurityConfiguration}, picked up by the component scan);</li>
 * <li>other nodes on the internal API: the cluster secret or a node certificate
 * ({@link io.quorumkv.service.security.InternalAuth});</li>
 * <li>the TLS of this node's calls to its peers, from an SSL bundle
 * ({@link io.quorumkv.service.security.PeerTls}).</li>
 * </ul>
 * Their settings are {@link io.quorumkv.service.security.SecurityProperties}
 * ({@code quorumkv.security.*}). Everything else here is package-private.
 */
@NullMarked
package io.quorumkv.service.security;

import org.jspecify.annotations.NullMarked;
