package io.quorumkv.client;

import java.util.Objects;

/**
 * What the client sends to prove who it is: an API key of the nodes'
 * {@code quorumkv.security.api-keys} (docs/security.md), needed when they run with
 * {@code quorumkv.security.public-api=authenticated}. A refused key fails a request with
 * {@link NotAuthorizedException}.
 *
 * <pre>{@code
 * QuorumKvClient.builder().seeds("https://kv1:8443").credentials(Credentials.bearer(apiKey))
 * }</pre>
 *
 * A client certificate (mutual TLS) is part of {@link TlsSettings}, not of this type.
 */
public sealed interface Credentials {

	/** No credentials (the default). */
	static Credentials none() {
		return None.INSTANCE;
	}

	/** An API key sent as {@code Authorization: Bearer <key>} on every request. */
	static Credentials bearer(String apiKey) {
		return new Bearer(apiKey);
	}

	/** No header. */
	enum None implements Credentials {

		INSTANCE

	}

	/**
	 * A bearer API key. Its {@code toString} does not show the key.
	 *
	 * @param apiKey the key, visible ASCII without spaces
	 */
	record Bearer(String apiKey) implements Credentials {

		public Bearer {
			Objects.requireNonNull(apiKey, "apiKey");
			if (apiKey.isEmpty() || !apiKey.chars().allMatch((c) -> c > 0x20 && c < 0x7f)) {
				throw new IllegalArgumentException("an API key is visible ASCII without spaces");
			}
		}

		String headerValue() {
			return "Bearer " + this.apiKey;
		}

		@Override
		public String toString() {
			return "Bearer[apiKey=***]";
		}

	}

}
