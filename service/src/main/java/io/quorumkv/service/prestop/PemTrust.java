package io.quorumkv.service.prestop;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** An {@link SSLContext} that trusts the certificates of one PEM file (a CA bundle). */
final class PemTrust {

	private PemTrust() {
	}

	static SSLContext context(Path pem) throws IOException, GeneralSecurityException {
		Collection<? extends Certificate> certificates;
		try (InputStream in = Files.newInputStream(pem)) {
			certificates = CertificateFactory.getInstance("X.509").generateCertificates(in);
		}
		if (certificates.isEmpty()) {
			throw new GeneralSecurityException(pem + " holds no certificate");
		}
		KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
		store.load(null, null);
		int i = 0;
		for (Certificate certificate : certificates) {
			store.setCertificateEntry("ca-" + i++, certificate);
		}
		TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
		trust.init(store);
		SSLContext context = SSLContext.getInstance("TLS");
		context.init(null, trust.getTrustManagers(), null);
		return context;
	}

}
