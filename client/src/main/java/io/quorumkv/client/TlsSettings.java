package io.quorumkv.client;

import java.util.Objects;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

import org.jspecify.annotations.Nullable;

/**
 * TLS for {@code https://} seeds: whom the client trusts (the cluster's CA, when the
 * nodes' certificates are not from a CA the JDK knows) and, for client-certificate
 * authentication, the certificate it presents (a node maps its common name to an access:
 * {@code quorumkv.security.certificates}, docs/security.md):
 *
 * <pre>{@code
 * TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
 * trust.init(clusterCaKeyStore);
 * KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
 * keys.init(clientKeyStore, password);
 * QuorumKvClient.builder().seeds("https://kv1:8443").tls(TlsSettings.trusting(trust).withClientCertificate(keys))
 * }</pre>
 *
 * @param trust whom to trust, or null for the JDK's default trust store
 * @param clientCertificate the client's key and certificate for mutual TLS, or null
 */
public record TlsSettings(@Nullable TrustManagerFactory trust, @Nullable KeyManagerFactory clientCertificate) {

	/** The JDK's default trust store, no client certificate. */
	public static TlsSettings systemDefault() {
		return new TlsSettings(null, null);
	}

	/** Trusts what {@code trust} trusts (for example the cluster's own CA). */
	public static TlsSettings trusting(TrustManagerFactory trust) {
		return new TlsSettings(Objects.requireNonNull(trust, "trust"), null);
	}

	/** A copy that presents this certificate to the nodes (mutual TLS). */
	public TlsSettings withClientCertificate(KeyManagerFactory clientCertificate) {
		return new TlsSettings(this.trust, Objects.requireNonNull(clientCertificate, "clientCertificate"));
	}

}
