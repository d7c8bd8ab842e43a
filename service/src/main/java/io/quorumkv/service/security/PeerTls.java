package io.quorumkv.service.security;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.tcp.SslProvider;

import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslOptions;

/**
 * The TLS of the calls to peers, from a Spring Boot SSL bundle
 * ({@code quorumkv.cluster.tls.bundle}): its trust store decides which peer certificates
 * are accepted (and the peer's host must match its certificate, as for any HTTPS call),
 * its key store is this node's certificate when a peer asks for one (mutual TLS).
 * <p>
 * When the bundle is reloaded ({@code reload-on-update}), the new keys and trust take
 * effect for every new connection at once, without a new client or a new connection pool:
 * the TLS context holds a key manager and a trust manager that delegate to the bundle's
 * current ones. Connections already open keep the certificates they were opened with
 * until they close (idle connections close after 30 s).
 */
public final class PeerTls {

	private static final Log logger = LogFactory.getLog(PeerTls.class);

	private final String name;

	private final AtomicReference<Managers> current = new AtomicReference<>();

	private final SslOptions options;

	private PeerTls(String name, SslBundle bundle) {
		this.name = name;
		this.options = bundle.getOptions();
		this.current.set(Managers.of(bundle));
	}

	/** The bundle's TLS, kept up to date with it. */
	public static PeerTls of(SslBundles bundles, String name) {
		PeerTls tls = new PeerTls(name, bundles.getBundle(name));
		bundles.addBundleUpdateHandler(name, tls::update);
		return tls;
	}

	void update(SslBundle bundle) {
		this.current.set(Managers.of(bundle));
		logger.info("SSL bundle '" + this.name + "' reloaded: new connections to peers use it");
	}

	/** Reactor Netty's TLS settings for the peer client. */
	public void configure(SslProvider.SslContextSpec spec) {
		spec.sslContext(Http11SslContextSpec.forClient().configure((builder) -> {
			builder.keyManager(new CurrentKeyManager()).trustManager(new CurrentTrustManager());
			if (this.options.getCiphers() != null) {
				builder.ciphers(Arrays.asList(this.options.getCiphers()));
			}
			if (this.options.getEnabledProtocols() != null) {
				builder.protocols(this.options.getEnabledProtocols());
			}
		}));
	}

	/** The bundle's key and trust managers at one moment. */
	private record Managers(X509ExtendedKeyManager keys, X509ExtendedTrustManager trust) {

		static Managers of(SslBundle bundle) {
			return new Managers(first(bundle.getManagers().getKeyManagers(), X509ExtendedKeyManager.class),
					first(bundle.getManagers().getTrustManagers(), X509ExtendedTrustManager.class));
		}

		private static <T> T first(Object @Nullable [] managers, Class<T> type) {
			if (managers != null) {
				for (Object manager : managers) {
					if (type.isInstance(manager)) {
						return type.cast(manager);
					}
				}
			}
			throw new IllegalStateException("the SSL bundle has no " + type.getSimpleName());
		}

	}

	/** This node's keys, as the bundle has them now. */
	private final class CurrentKeyManager extends X509ExtendedKeyManager implements KeyManager {

		private X509ExtendedKeyManager keys() {
			return PeerTls.this.current.get().keys();
		}

		@Override
		public String[] getClientAliases(String keyType, Principal[] issuers) {
			return keys().getClientAliases(keyType, issuers);
		}

		@Override
		public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
			return keys().chooseClientAlias(keyType, issuers, socket);
		}

		@Override
		public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
			return keys().chooseEngineClientAlias(keyType, issuers, engine);
		}

		@Override
		public String[] getServerAliases(String keyType, Principal[] issuers) {
			return keys().getServerAliases(keyType, issuers);
		}

		@Override
		public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
			return keys().chooseServerAlias(keyType, issuers, socket);
		}

		@Override
		public X509Certificate[] getCertificateChain(String alias) {
			return keys().getCertificateChain(alias);
		}

		@Override
		public PrivateKey getPrivateKey(String alias) {
			return keys().getPrivateKey(alias);
		}

	}

	/** The peers this node trusts, as the bundle has them now. */
	private final class CurrentTrustManager extends X509ExtendedTrustManager implements TrustManager {

		private X509ExtendedTrustManager trust() {
			return PeerTls.this.current.get().trust();
		}

		@Override
		public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
				throws CertificateException {
			trust().checkClientTrusted(chain, authType, socket);
		}

		@Override
		public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
				throws CertificateException {
			trust().checkServerTrusted(chain, authType, socket);
		}

		@Override
		public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
				throws CertificateException {
			trust().checkClientTrusted(chain, authType, engine);
		}

		@Override
		public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
				throws CertificateException {
			trust().checkServerTrusted(chain, authType, engine);
		}

		@Override
		public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
			trust().checkClientTrusted(chain, authType);
		}

		@Override
		public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
			trust().checkServerTrusted(chain, authType);
		}

		@Override
		public X509Certificate[] getAcceptedIssuers() {
			return trust().getAcceptedIssuers();
		}

	}

}
