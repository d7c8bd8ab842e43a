package io.quorumkv.service.security;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Topology;
import org.jspecify.annotations.Nullable;

/**
 * Tells a node's certificate from any other (mutual TLS between the nodes). The TLS
 * handshake has already checked that the certificate chains to a trusted issuer
 * ({@code server.ssl}'s trust store); this checks that it was issued to a node: one of
 * its DNS or IP subject alternative names (or, without any, its common name) is the host
 * of a node of the cluster, with a wildcard allowed as the whole leftmost label
 * ({@code *.quorumkv.default.svc.cluster.local}), as in HTTPS's own host name check. A
 * client certificate from the same CA issued to anything else is refused.
 */
final class NodeCertificates {

	private static final int DNS = 2;

	private static final int IP = 7;

	private final Set<String> hosts;

	NodeCertificates(Topology topology) {
		this.hosts = topology.nodes()
			.stream()
			.map(Node::url)
			.map((url) -> url.getHost().toLowerCase(Locale.ROOT))
			.map((host) -> host.startsWith("[") ? host.substring(1, host.length() - 1) : host)
			.collect(Collectors.toUnmodifiableSet());
	}

	/** Whether the presented chain's first certificate was issued to a node. */
	boolean isNode(X509Certificate @Nullable [] chain) {
		if (chain == null || chain.length == 0) {
			return false;
		}
		for (String name : names(chain[0])) {
			for (String host : this.hosts) {
				if (matches(name.toLowerCase(Locale.ROOT), host)) {
					return true;
				}
			}
		}
		return false;
	}

	static boolean matches(String name, String host) {
		if (name.startsWith("*.")) {
			int dot = host.indexOf('.');
			return dot > 0 && host.substring(dot).equals(name.substring(1));
		}
		return name.equals(host);
	}

	private static List<String> names(X509Certificate certificate) {
		List<String> names = new ArrayList<>();
		try {
			var alternatives = certificate.getSubjectAlternativeNames();
			if (alternatives != null) {
				for (List<?> alternative : alternatives) {
					int type = (Integer) alternative.get(0);
					if ((type == DNS || type == IP) && alternative.get(1) instanceof String value) {
						names.add(value);
					}
				}
			}
		}
		catch (CertificateParsingException ex) {
			return List.of();
		}
		if (names.isEmpty()) {
			String commonName = Credentials.commonName(certificate);
			if (commonName != null) {
				names.add(commonName);
			}
		}
		return names;
	}

}
