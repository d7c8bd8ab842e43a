package io.quorumkv.service.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.X509Certificate;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

import io.quorumkv.service.security.SecurityProperties.Access;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.SslInfo;
import org.springframework.security.authentication.AbstractAuthenticationToken;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.security.web.server.authentication.ServerAuthenticationConverter;
import org.springframework.web.server.ServerWebExchange;

/**
 * Reads a request's credential and decides who it is: an API key
 * ({@code Authorization: Bearer <key>}, looked up by its SHA-256) or a client certificate
 * (by its subject's common name). An unknown API key fails the request (401); a
 * certificate the configuration does not name is no credential at all (a peer node's
 * certificate on the internal API, say). Each access is a set of roles: {@code READ},
 * {@code WRITE}, {@code ADMIN}.
 */
final class Credentials implements ServerAuthenticationConverter, ReactiveAuthenticationManager {

	private static final String BEARER = "bearer ";

	private final Map<String, Identity> keysByHash = new HashMap<>();

	private final Map<String, Access> certificates;

	Credentials(SecurityProperties security) {
		security.apiKeys().forEach((name, key) -> this.keysByHash.put(key.sha256(), new Identity(name, key.access())));
		this.certificates = security.certificates();
	}

	@Override
	public Mono<Authentication> convert(ServerWebExchange exchange) {
		String header = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
		if (header != null && header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
			return Mono.just(new Presented(header.substring(BEARER.length()).strip(), null));
		}
		if (!this.certificates.isEmpty()) {
			SslInfo ssl = exchange.getRequest().getSslInfo();
			X509Certificate[] chain = (ssl != null) ? ssl.getPeerCertificates() : null;
			String commonName = (chain != null && chain.length > 0) ? commonName(chain[0]) : null;
			if (commonName != null && this.certificates.containsKey(commonName)) {
				return Mono.just(new Presented(null, commonName));
			}
		}
		return Mono.empty();
	}

	@Override
	public Mono<Authentication> authenticate(Authentication authentication) {
		return Mono.fromSupplier(() -> {
			Presented presented = (Presented) authentication;
			if (presented.commonName != null) {
				return new Identity("certificate " + presented.commonName, this.certificates.get(presented.commonName));
			}
			Identity identity = this.keysByHash.get(sha256(presented.apiKey));
			if (identity == null) {
				throw new BadCredentialsException("unknown API key");
			}
			return identity;
		});
	}

	static String sha256(@Nullable String key) {
		try {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			return HexFormat.of().formatHex(digest.digest(((key != null) ? key : "").getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static @Nullable String commonName(X509Certificate certificate) {
		try {
			for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
				if (rdn.getType().equalsIgnoreCase("CN")) {
					return rdn.getValue().toString();
				}
			}
		}
		catch (InvalidNameException ex) {
			return null;
		}
		return null;
	}

	static List<GrantedAuthority> roles(Access access) {
		return switch (access) {
			case READ_ONLY -> List.of(new SimpleGrantedAuthority("ROLE_READ"));
			case READ_WRITE ->
				List.of(new SimpleGrantedAuthority("ROLE_READ"), new SimpleGrantedAuthority("ROLE_WRITE"));
			case ADMIN -> List.of(new SimpleGrantedAuthority("ROLE_READ"), new SimpleGrantedAuthority("ROLE_WRITE"),
					new SimpleGrantedAuthority("ROLE_ADMIN"));
		};
	}

	/** A credential as presented, not yet checked; its {@code toString} hides the key. */
	private static final class Presented extends AbstractAuthenticationToken {

		private final @Nullable String apiKey;

		private final @Nullable String commonName;

		Presented(@Nullable String apiKey, @Nullable String commonName) {
			super(List.of());
			this.apiKey = apiKey;
			this.commonName = commonName;
		}

		@Override
		public @Nullable Object getCredentials() {
			return null;
		}

		@Override
		public Object getPrincipal() {
			return (this.commonName != null) ? this.commonName : "api key";
		}

	}

	/** Who a checked credential belongs to: a key's name, or a certificate. */
	static final class Identity extends AbstractAuthenticationToken {

		private final String name;

		Identity(String name, Access access) {
			super(roles(access));
			this.name = name;
			setAuthenticated(true);
		}

		@Override
		public @Nullable Object getCredentials() {
			return null;
		}

		@Override
		public Object getPrincipal() {
			return this.name;
		}

		@Override
		public String getName() {
			return this.name;
		}

	}

}
