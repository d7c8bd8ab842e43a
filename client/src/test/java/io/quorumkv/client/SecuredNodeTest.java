package io.quorumkv.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.net.ssl.SSLContext;

import io.quorumkv.service.support.TestCertificates;
import io.quorumkv.service.support.TestCertificates.Authority;
import io.quorumkv.service.support.TestCertificates.Issued;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client against a node that serves TLS and wants every client to authenticate
 * ({@code quorumkv.security.public-api=authenticated}): an API key, a client certificate,
 * and the refusals a caller sees as {@link NotAuthorizedException} without a retry.
 */
class SecuredNodeTest {

	static final String APP_KEY = "client-test-app-key-31d4";

	@TempDir
	static Path tls;

	static Authority authority;

	static TestNodes nodes;

	@BeforeAll
	static void start() throws Exception {
		authority = Authority.create("client test CA");
		authority.writePem(tls, "ca");
		authority.issue("quorumkv-node", "127.0.0.1").writePem(tls, "node");
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("spring.ssl.bundle.pem.qkv.keystore.certificate", "file:" + tls.resolve("node.crt"));
		properties.put("spring.ssl.bundle.pem.qkv.keystore.private-key", "file:" + tls.resolve("node.key"));
		properties.put("spring.ssl.bundle.pem.qkv.truststore.certificate", "file:" + tls.resolve("ca.crt"));
		properties.put("server.ssl.bundle", "qkv");
		properties.put("quorumkv.cluster.tls.bundle", "qkv");
		properties.put("server.ssl.client-auth", "want");
		properties.put("quorumkv.security.public-api", "authenticated");
		properties.put("quorumkv.security.api-keys.app.sha256", sha256(APP_KEY));
		properties.put("quorumkv.security.api-keys.app.access", "read-write");
		properties.put("quorumkv.security.certificates.billing", "read-write");
		properties.put("quorumkv.security.certificates.auditor", "read-only");
		SSLContext probe = SSLContext.getInstance("TLS");
		probe.init(null, authority.trustManagers().getTrustManagers(), null);
		nodes = TestNodes.startTls(1, properties, probe);
	}

	@AfterAll
	static void stop() throws Exception {
		if (nodes != null) {
			nodes.close();
		}
	}

	private static QuorumKvClientBuilder builder() {
		return QuorumKvClient.builder().seeds(nodes.urls());
	}

	@Test
	void anApiKeyOverTls() {
		try (QuorumKvClient client = builder().tls(TlsSettings.trusting(authority.trustManagers()))
			.credentials(Credentials.bearer(APP_KEY))
			.build()) {
			client.blocking().put("key-1", bytes("v1"));
			assertThat(client.blocking().get("key-1"))
				.hasValueSatisfying((value) -> assertThat(value).isEqualTo(bytes("v1")));
			assertThat(client.blocking().scan("key-", null, 10)).hasSize(1);
		}
	}

	@Test
	void aClientCertificateOfTheRightAccess() {
		Issued billing = authority.issue("billing", "billing.example.com");
		Issued auditor = authority.issue("auditor", "auditor.example.com");
		TlsSettings trust = TlsSettings.trusting(authority.trustManagers());
		try (QuorumKvClient writer = builder().tls(trust.withClientCertificate(billing.keyManagers())).build();
				QuorumKvClient reader = builder().tls(trust.withClientCertificate(auditor.keyManagers())).build()) {
			writer.blocking().put("cert-1", bytes("c"));
			assertThat(reader.blocking().get("cert-1")).isPresent();
			assertThatExceptionOfType(NotAuthorizedException.class)
				.isThrownBy(() -> reader.blocking().put("cert-1", bytes("d")))
				.satisfies((refused) -> {
					assertThat(refused.status()).isEqualTo(403);
					assertThat(refused.mayHaveBeenApplied()).isFalse();
					assertThat(refused.attempts()).isEqualTo(1);
					assertThat(refused).hasMessageContaining("forbidden");
				});
		}
	}

	@Test
	void withoutACredentialOrWithAnUnknownKeyIsRefused() {
		TlsSettings trust = TlsSettings.trusting(authority.trustManagers());
		try (QuorumKvClient anonymous = builder().tls(trust).build();
				QuorumKvClient wrong = builder().tls(trust).credentials(Credentials.bearer("not-a-key")).build()) {
			assertThatExceptionOfType(NotAuthorizedException.class).isThrownBy(() -> anonymous.blocking().get("k"))
				.satisfies((refused) -> assertThat(refused.status()).isEqualTo(401));
			assertThatExceptionOfType(NotAuthorizedException.class).isThrownBy(() -> wrong.blocking().get("k"))
				.withMessageContaining("unknown API key");
		}
	}

	@Test
	void aClientThatDoesNotTrustTheNodeSendsNothing() {
		try (QuorumKvClient untrusting = builder().tls(TlsSettings.systemDefault())
			.credentials(Credentials.bearer(APP_KEY))
			.retryPolicy(RetryPolicy.DEFAULT.withMaxAttempts(1))
			.build()) {
			assertThatExceptionOfType(NodeUnavailableException.class)
				.isThrownBy(() -> untrusting.blocking().put("never", bytes("x")))
				.satisfies((failure) -> assertThat(failure.mayHaveBeenApplied()).isFalse());
		}
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static String sha256(String key) throws Exception {
		return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes(key)));
	}

}
