package io.quorumkv.client;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The client's settings, validated once when it is built ({@link QuorumKvClientBuilder}
 * documents each one). Every pool and queue it sizes is bounded. {@code router} is null
 * for the built-in routing ({@code routing}), a custom router otherwise.
 */
record ClientConfig(List<URI> seeds, Duration connectTimeout, Duration responseTimeout, int maxConnectionsPerNode,
		int pendingAcquireMaxCount, Duration maxIdleTime, int ioThreads, int maxValueSize, Duration nodeDownTime,
		RetryPolicy retryPolicy, @Nullable Router router, QuorumKvClientBuilder.Routing routing,
		Duration ringRefreshInterval, Credentials credentials, @Nullable TlsSettings tls) {

	/**
	 * The largest key the server accepts ({@code quorumkv.http.max-key-size} may be
	 * less).
	 */
	static final int MAX_KEY_BYTES = 4096;

	/** What a seed looks like, for the messages that refuse one. */
	static final String SEED_FORM = "give each seed as http://host:port (https://host:port with tls(...))";

	ClientConfig {
		seeds = List.copyOf(seeds);
		Objects.requireNonNull(retryPolicy, "retryPolicy");
		Objects.requireNonNull(routing, "routing");
		Objects.requireNonNull(credentials, "credentials");
		if (seeds.isEmpty() || seeds.size() > 256) {
			throw new IllegalArgumentException("give 1..256 seed URLs, not " + seeds.size());
		}
		if (seeds.stream().distinct().count() != seeds.size()) {
			throw new IllegalArgumentException("seed URLs repeat: " + seeds);
		}
		boolean https = "https".equals(seeds.get(0).getScheme());
		for (URI seed : seeds) {
			if (!"https".equals(seed.getScheme()) && !"http".equals(seed.getScheme())) {
				throw new IllegalArgumentException(
						"seed '" + seed + "' is not an http:// or https:// URL: " + SEED_FORM);
			}
			if ("https".equals(seed.getScheme()) != https) {
				throw new IllegalArgumentException("seeds mix http and https: " + seeds);
			}
			if (seed.getHost() == null || seed.getRawQuery() != null || seed.getRawFragment() != null
					|| !(seed.getRawPath() == null || seed.getRawPath().isEmpty())) {
				throw new IllegalArgumentException(
						"seed '" + seed + "' is more than scheme://host[:port]: " + SEED_FORM);
			}
		}
		if (tls != null && !https) {
			throw new IllegalArgumentException("TLS settings given for http:// seeds");
		}
		positive("connectTimeout", connectTimeout, Duration.ofMinutes(1));
		positive("responseTimeout", responseTimeout, Duration.ofHours(1));
		positive("maxIdleTime", maxIdleTime, Duration.ofHours(1));
		positive("nodeDownTime", nodeDownTime, Duration.ofHours(1));
		positive("ringRefreshInterval", ringRefreshInterval, Duration.ofHours(1));
		within("maxConnectionsPerNode", maxConnectionsPerNode, 1, 10_000);
		within("pendingAcquireMaxCount", pendingAcquireMaxCount, 1, 1_000_000);
		within("ioThreads", ioThreads, 1, 1024);
		within("maxValueSize", maxValueSize, 1, Integer.MAX_VALUE - MAX_KEY_BYTES - 1);
	}

	boolean https() {
		return "https".equals(this.seeds.get(0).getScheme());
	}

	/**
	 * The largest scan record (key, separator, value): one HTTP chunk is buffered whole.
	 */
	int maxRecordSize() {
		return this.maxValueSize + MAX_KEY_BYTES + 1;
	}

	private static void positive(String name, Duration value, Duration max) {
		Objects.requireNonNull(value, name);
		if (value.isNegative() || value.isZero() || value.compareTo(max) > 0) {
			throw new IllegalArgumentException(name + " must be positive and at most " + max + ", not " + value);
		}
	}

	private static void within(String name, int value, int min, int max) {
		if (value < min || value > max) {
			throw new IllegalArgumentException(name + " must be " + min + ".." + max + ", not " + value);
		}
	}

}
