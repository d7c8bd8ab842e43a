package io.quorumkv.service.support;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.jspecify.annotations.Nullable;

/**
 * Certificates made at test time (no private key is ever committed): a CA, and
 * certificates it issues for nodes (server and client use, with IP, DNS or URI names) and
 * for clients. {@link #writePem} writes the PEM files an SSL bundle reads.
 */
public final class TestCertificates {

	private static final AtomicLong SERIALS = new AtomicLong(System.nanoTime());

	private TestCertificates() {
	}

	/** A key and its certificate chain (the certificate, then its issuer). */
	public record Issued(PrivateKey key, X509Certificate certificate, X509Certificate issuer) {

		/** The certificate's serial number. */
		public BigInteger serial() {
			return this.certificate.getSerialNumber();
		}

		/** {@code <name>.crt} (the chain) and {@code <name>.key} (PKCS#8) in a folder. */
		public void writePem(Path folder, String name) {
			write(folder.resolve(name + ".crt"),
					pem("CERTIFICATE", encoded(this.certificate)) + pem("CERTIFICATE", encoded(this.issuer)));
			write(folder.resolve(name + ".key"), pem("PRIVATE KEY", this.key.getEncoded()));
		}

		/** For a Netty client presenting this certificate. */
		public KeyManagerFactory keyManagers() {
			try {
				var store = java.security.KeyStore.getInstance("PKCS12");
				store.load(null, null);
				store.setKeyEntry("key", this.key, new char[0],
						new java.security.cert.Certificate[] { this.certificate, this.issuer });
				KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
				factory.init(store, new char[0]);
				return factory;
			}
			catch (GeneralSecurityException | IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

	/** A certificate authority. */
	public record Authority(KeyPair keys, X509Certificate certificate) {

		/** A new self-signed CA. */
		public static Authority create(String name) {
			KeyPair keys = keyPair();
			X500Name subject = new X500Name("CN=" + name);
			try {
				var builder = new JcaX509v3CertificateBuilder(subject, serial(), notBefore(), notAfter(), subject,
						keys.getPublic());
				builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
				builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
				return new Authority(keys, sign(builder, keys.getPrivate()));
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		/**
		 * A node's certificate: for servers and clients, with these subject alternative
		 * names (an IP address, a URI such as {@code spiffe://…}, or else a DNS name).
		 */
		public Issued issue(String commonName, String... names) {
			return issue(commonName,
					new KeyPurposeId[] { KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth }, names);
		}

		/**
		 * An application's certificate: for clients only ({@code clientAuth}), with these
		 * subject alternative names, as a CA that serves applications besides the nodes
		 * issues them.
		 */
		public Issued issueClient(String commonName, String... names) {
			return issue(commonName, new KeyPurposeId[] { KeyPurposeId.id_kp_clientAuth }, names);
		}

		private Issued issue(String commonName, KeyPurposeId[] purposes, String... names) {
			KeyPair pair = keyPair();
			try {
				var builder = new JcaX509v3CertificateBuilder(this.certificate, serial(), notBefore(), notAfter(),
						new X500Name("CN=" + commonName), pair.getPublic());
				builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
				builder.addExtension(Extension.keyUsage, true,
						new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
				builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purposes));
				if (names.length > 0) {
					List<GeneralName> alternatives = new ArrayList<>();
					for (String name : names) {
						alternatives.add(isIp(name) ? new GeneralName(GeneralName.iPAddress, name)
								: name.contains("://") ? new GeneralName(GeneralName.uniformResourceIdentifier, name)
										: new GeneralName(GeneralName.dNSName, name));
					}
					builder.addExtension(Extension.subjectAlternativeName, false,
							new GeneralNames(alternatives.toArray(GeneralName[]::new)));
				}
				return new Issued(pair.getPrivate(), sign(builder, this.keys.getPrivate()), this.certificate);
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		/** {@code <name>.crt}: the CA's certificate, for a trust store. */
		public void writePem(Path folder, String name) {
			write(folder.resolve(name + ".crt"), pem("CERTIFICATE", encoded(this.certificate)));
		}

		/** Trusts this CA only. */
		public TrustManagerFactory trustManagers() {
			try {
				var store = java.security.KeyStore.getInstance("PKCS12");
				store.load(null, null);
				store.setCertificateEntry("ca", this.certificate);
				TrustManagerFactory factory = TrustManagerFactory
					.getInstance(TrustManagerFactory.getDefaultAlgorithm());
				factory.init(store);
				return factory;
			}
			catch (GeneralSecurityException | IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		/**
		 * A Netty client context trusting this CA, optionally presenting a certificate.
		 */
		public SslContext clientContext(@Nullable Issued clientCertificate) {
			try {
				SslContextBuilder builder = SslContextBuilder.forClient().trustManager(trustManagers());
				if (clientCertificate != null) {
					builder.keyManager(clientCertificate.keyManagers());
				}
				return builder.build();
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

	private static boolean isIp(String name) {
		return name.chars().allMatch((c) -> Character.isDigit(c) || c == '.')
				|| (name.contains(":") && !name.contains("://"));
	}

	private static KeyPair keyPair() {
		try {
			KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
			generator.initialize(256);
			return generator.generateKeyPair();
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static X509Certificate sign(JcaX509v3CertificateBuilder builder, PrivateKey issuerKey) {
		try {
			var signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey);
			return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
		}
		catch (GeneralSecurityException | org.bouncycastle.operator.OperatorCreationException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static BigInteger serial() {
		return BigInteger.valueOf(SERIALS.incrementAndGet());
	}

	private static Date notBefore() {
		return Date.from(Instant.now().minus(Duration.ofHours(1)));
	}

	private static Date notAfter() {
		return Date.from(Instant.now().plus(Duration.ofDays(2)));
	}

	private static byte[] encoded(X509Certificate certificate) {
		try {
			return certificate.getEncoded();
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String pem(String type, byte[] der) {
		return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] { '\n' }).encodeToString(der)
				+ "\n-----END " + type + "-----\n";
	}

	private static void write(Path file, String text) {
		try {
			Files.createDirectories(file.getParent());
			// Written to a sibling and moved into place, so that a reloading node never
			// reads half a file.
			Path partial = file.resolveSibling(file.getFileName() + ".partial");
			Files.writeString(partial, text);
			Files.move(partial, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
					java.nio.file.StandardCopyOption.ATOMIC_MOVE);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
