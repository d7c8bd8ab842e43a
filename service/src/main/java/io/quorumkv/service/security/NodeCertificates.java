package io.quorumkv.service.security;

import java.net.URI;
import java.net.URISyntaxException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Tells a node's certificate from any other (mutual TLS between the nodes). The TLS
 * handshake has already checked that the certificate chains to a trusted issuer
 * ({@code server.ssl}'s trust store); this checks that it was issued to a node of this
 * cluster: one of its subject alternative names is the URI
 * {@code spiffe://<cluster-id>/node/<node-name>}, with this node's cluster id (its
 * ring's, or {@code quorumkv.cluster.id} before it has a ring). Nothing else names a
 * node: not the common name, not a DNS or IP name (an application on a node's host may
 * hold one from the same CA), not a node URI of another cluster. A node without a cluster
 * id yet (no ring, none configured) takes no certificate for a node.
 */
final class NodeCertificates {

	/** The scheme of a node identity, SPIFFE's. */
	static final String SCHEME = "spiffe";

	/** The path of a node identity under its cluster. */
	static final String NODE_PATH = "/node/";

	private static final int URI_NAME = 6;

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");

	private final Supplier<@Nullable String> clusterId;

	/**
	 * @param clusterId this node's cluster id now, or null while it has none
	 */
	NodeCertificates(Supplier<@Nullable String> clusterId) {
		this.clusterId = clusterId;
	}

	/**
	 * Whether the presented chain's first certificate was issued to a node of this
	 * cluster.
	 */
	boolean isNode(X509Certificate @Nullable [] chain) {
		String cluster = this.clusterId.get();
		if (chain == null || chain.length == 0 || cluster == null) {
			return false;
		}
		for (String uri : uris(chain[0])) {
			if (isNodeOf(uri, cluster)) {
				return true;
			}
		}
		return false;
	}

	/** Whether a URI is {@code spiffe://<cluster>/node/<name>}, nothing more. */
	static boolean isNodeOf(String text, String cluster) {
		URI uri;
		try {
			uri = new URI(text);
		}
		catch (URISyntaxException ex) {
			return false;
		}
		String path = uri.getRawPath();
		return SCHEME.equals(uri.getScheme()) && cluster.equals(uri.getRawAuthority()) && uri.getRawQuery() == null
				&& uri.getRawFragment() == null && path != null && path.startsWith(NODE_PATH)
				&& NAME.matcher(path.substring(NODE_PATH.length())).matches();
	}

	private static List<String> uris(X509Certificate certificate) {
		try {
			Collection<List<?>> alternatives = certificate.getSubjectAlternativeNames();
			if (alternatives == null) {
				return List.of();
			}
			return alternatives.stream()
				.filter((alternative) -> (Integer) alternative.get(0) == URI_NAME)
				.map((alternative) -> alternative.get(1))
				.filter(String.class::isInstance)
				.map(String.class::cast)
				.toList();
		}
		catch (CertificateParsingException ex) {
			return List.of();
		}
	}

}
