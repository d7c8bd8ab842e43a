package io.quorumkv.service.support;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

/**
 * API keys of test nodes, one per access; the nodes are given their SHA-256 only, as in
 * production.
 */
public final class TestKeys {

	public static final String ADMIN = "test-admin-key-7f3a9c";

	public static final String WRITER = "test-writer-key-51be02";

	public static final String READER = "test-reader-key-c0ffee";

	private TestKeys() {
	}

	/** Node properties declaring the three keys. */
	public static Map<String, String> properties() {
		return Map.of("quorumkv.security.api-keys.ops.sha256", sha256(ADMIN), "quorumkv.security.api-keys.ops.access",
				"admin", "quorumkv.security.api-keys.app.sha256", sha256(WRITER),
				"quorumkv.security.api-keys.app.access", "read-write", "quorumkv.security.api-keys.report.sha256",
				sha256(READER), "quorumkv.security.api-keys.report.access", "read-only");
	}

	/** The header value presenting a key. */
	public static String bearer(String key) {
		return "Bearer " + key;
	}

	public static String sha256(String key) {
		try {
			return HexFormat.of()
				.formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
