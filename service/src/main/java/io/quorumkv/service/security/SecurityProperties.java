package io.quorumkv.service.security;

import java.util.Locale;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Client authentication (docs/security.md). Keys are given by their SHA-256 only, never
 * in clear; a client sends {@code Authorization: Bearer <key>}. The admin operations (the
 * {@code quorumkv} Actuator endpoint, and any other endpoint but health, info, metrics
 * and prometheus) always need a credential of {@code admin} access; health shows its
 * details to that credential only.
 *
 * @param publicApi {@code open}: anyone may use the public API, and its requests never
 * pass Spring Security; {@code authenticated}: every request but {@code /v0/status} needs
 * an API key or a client certificate of the right access
 * @param apiKeys API keys by name: {@code sha256} (64 hex digits of the key's SHA-256)
 * and {@code access} ({@code read-only}, {@code read-write} or {@code admin})
 * @param certificates client certificates by subject common name, with their access;
 * needs TLS with {@code server.ssl.client-auth} {@code want} or {@code need}
 */
@ConfigurationProperties("quorumkv.security")
public record SecurityProperties(@DefaultValue("open") PublicApi publicApi,
		@DefaultValue Map<String, ApiKeyProperties> apiKeys, @DefaultValue Map<String, Access> certificates) {

	public SecurityProperties {
		apiKeys = Map.copyOf(apiKeys);
		certificates = Map.copyOf(certificates);
	}

	/**
	 * One API key.
	 *
	 * @param sha256 the key's SHA-256 as 64 hex digits
	 * ({@code printf %s "$KEY" | sha256sum})
	 * @param access what the key may do
	 */
	public record ApiKeyProperties(String sha256, @DefaultValue("read-only") Access access) {

		public ApiKeyProperties {
			if (sha256 == null || !sha256.matches("[0-9a-fA-F]{64}")) {
				throw new IllegalArgumentException(
						"quorumkv.security.api-keys.<name>.sha256 must be 64 hex digits (the key's SHA-256)");
			}
			sha256 = sha256.toLowerCase(Locale.ROOT);
		}

	}

	/** Whether the public API asks clients who they are. */
	public enum PublicApi {

		/** Anyone may read and write. */
		OPEN,
		/** An API key or a client certificate is needed. */
		AUTHENTICATED

	}

	/** What a credential may do; each level includes the one before. */
	public enum Access {

		/** Reads: GET of entities and ranges. */
		READ_ONLY,
		/** Reads and writes: PUT and DELETE too. */
		READ_WRITE,
		/** Everything, and the admin operations. */
		ADMIN

	}

}
