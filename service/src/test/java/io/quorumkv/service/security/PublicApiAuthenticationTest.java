package io.quorumkv.service.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.quorumkv.service.support.FreePorts;
import io.quorumkv.service.support.TestCertificates.Issued;
import io.quorumkv.service.support.TestClients;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.service.support.TestKeys;
import io.quorumkv.service.support.TestTls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A node whose public API needs a credential ({@code public-api=authenticated}): API keys
 * by access, client certificates by common name, short 401 and 403 answers, and Actuator
 * on a port of its own, where every endpoint but health and prometheus needs an admin
 * credential and health shows details only to it.
 */
class PublicApiAuthenticationTest {

	@TempDir
	static Path root;

	static TestTls tls;

	static TestCluster node;

	static int managementPort;

	@BeforeAll
	static void start() {
		tls = TestTls.create(root.resolve("tls"), false);
		managementPort = FreePorts.take(1)[0];
		Map<String, String> properties = new HashMap<>(TestKeys.properties());
		properties.put("quorumkv.security.public-api", "authenticated");
		properties.put("server.ssl.client-auth", "want");
		properties.put("quorumkv.security.certificates.reporting-app", "read-only");
		properties.put("management.server.port", Integer.toString(managementPort));
		properties.put("management.endpoints.web.exposure.include", "health,metrics,prometheus,quorumkv");
		node = new TestCluster(root, 1, properties, tls).startAll();
	}

	@AfterAll
	static void stop() {
		if (node != null) {
			node.close();
		}
	}

	private static WebTestClient client(String key) {
		return node.client(0).mutate().defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(key)).build();
	}

	@Test
	void plainHttpToTheTlsPortIsAnsweredWithAHintInPlainHttp() throws IOException {
		try (Socket socket = new Socket("127.0.0.1", node.port(0))) {
			socket.setSoTimeout(10_000);
			socket.getOutputStream()
				.write("GET /v0/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
			String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
			assertThat(answer).startsWith("HTTP/1.1 400 Bad Request\r\n")
				.contains("Connection: close\r\n")
				.endsWith("\r\n\r\nthis port speaks TLS: use https://\n");
		}
	}

	@Test
	void withoutACredentialOnlyTheStatusIsServed() {
		node.client(0).get().uri("/v0/status").exchange().expectStatus().isOk();
		node.client(0)
			.get()
			.uri("/v0/entity?id=k")
			.exchange()
			.expectStatus()
			.isUnauthorized()
			.expectHeader()
			.valueEquals(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"quorumkv\"")
			.expectBody(String.class)
			.isEqualTo("authentication required: send Authorization: Bearer <API key> or a client certificate\n");
		node.client(0).put().uri("/v0/entity?id=k").bodyValue("v").exchange().expectStatus().isUnauthorized();
		// Another spelling of the path is no way around it: Spring Security's firewall
		// refuses what is not plainly written.
		node.client(0)
			.get()
			.uri(node.uri(0, "/v0/entity;x=1?id=k"))
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value((body) -> assertThat(body).startsWith("request rejected: "));
		node.client(0)
			.get()
			.uri(node.uri(0, "/v0/%65ntity?id=k"))
			.exchange()
			.expectStatus()
			.value((status) -> assertThat(status).isIn(400, 401));
		node.client(0).get().uri("/nowhere").exchange().expectStatus().isUnauthorized();
	}

	@Test
	void aReadOnlyKeyReadsAndAReadWriteKeyWrites() {
		client(TestKeys.WRITER).put().uri("/v0/entity?id=k1").bodyValue("v1").exchange().expectStatus().isCreated();
		client(TestKeys.READER).get()
			.uri("/v0/entity?id=k1")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.isEqualTo("v1");
		client(TestKeys.READER).get().uri("/v0/entities?start=k").exchange().expectStatus().isOk();
		client(TestKeys.READER).put()
			.uri("/v0/entity?id=k1")
			.bodyValue("v2")
			.exchange()
			.expectStatus()
			.isForbidden()
			.expectBody(String.class)
			.isEqualTo("forbidden: this credential may not PUT /v0/entity\n");
		client(TestKeys.READER).delete().uri("/v0/entity?id=k1").exchange().expectStatus().isForbidden();
		client(TestKeys.WRITER).delete().uri("/v0/entity?id=k1").exchange().expectStatus().isAccepted();
		client(TestKeys.ADMIN).get().uri("/v0/entity?id=k1").exchange().expectStatus().isNotFound();
		client("not-a-key").get()
			.uri("/v0/entity?id=k1")
			.exchange()
			.expectStatus()
			.isUnauthorized()
			.expectBody(String.class)
			.isEqualTo("authentication failed: unknown API key\n");
		// Errors of the API itself are unchanged behind authentication.
		client(TestKeys.WRITER).patch()
			.uri("/v0/entity?id=k1")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
		client(TestKeys.READER).get().uri("/v0/entity?id=").exchange().expectStatus().isBadRequest();
	}

	@Test
	void aClientCertificateNamedInTheConfigurationIsACredential() {
		Issued reporting = tls.authority().issue("reporting-app", "reporting.example.com");
		WebTestClient reporter = TestClients.forUrl(node.url(0), tls.authority().clientContext(reporting));
		client(TestKeys.WRITER).put().uri("/v0/entity?id=c1").bodyValue("v").exchange().expectStatus().isCreated();
		reporter.get().uri("/v0/entity?id=c1").exchange().expectStatus().isOk();
		reporter.put().uri("/v0/entity?id=c1").bodyValue("w").exchange().expectStatus().isForbidden();
		Issued stranger = tls.authority().issue("unlisted-app", "unlisted.example.com");
		TestClients.forUrl(node.url(0), tls.authority().clientContext(stranger))
			.get()
			.uri("/v0/entity?id=c1")
			.exchange()
			.expectStatus()
			.isUnauthorized();
	}

	@Test
	void managementPortNeedsAnAdminCredentialButForHealthAndMetrics() {
		WebTestClient management = TestClients.forUrl("https://127.0.0.1:" + managementPort, tls.anonymousClient());
		String health = management.get()
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(health).contains("\"status\":\"UP\"").doesNotContain("components").doesNotContain("path");
		management.get().uri("/actuator/health/readiness").exchange().expectStatus().isOk();
		management.get().uri("/actuator/prometheus").exchange().expectStatus().isOk();
		management.get().uri("/actuator/quorumkv").exchange().expectStatus().isUnauthorized();
		management.post().uri("/actuator/quorumkv/flush").exchange().expectStatus().isUnauthorized();
		management.get()
			.uri("/actuator/%71uorumkv")
			.exchange()
			.expectStatus()
			.value((status) -> assertThat(status).isIn(400, 401));
		management.get().uri("/actuator/metrics").exchange().expectStatus().isOk();
		WebTestClient writer = management.mutate()
			.defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(TestKeys.WRITER))
			.build();
		writer.post().uri("/actuator/quorumkv/flush").exchange().expectStatus().isForbidden();
		WebTestClient admin = management.mutate()
			.defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(TestKeys.ADMIN))
			.build();
		admin.post()
			.uri("/actuator/quorumkv/flush")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isOk();
		admin.get().uri("/actuator/quorumkv").exchange().expectStatus().isOk();
		admin.get()
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.components.storage.status")
			.isEqualTo("UP");
		// The public port does not serve Actuator at all.
		client(TestKeys.ADMIN).get().uri("/actuator/health").exchange().expectStatus().isNotFound();
	}

}
