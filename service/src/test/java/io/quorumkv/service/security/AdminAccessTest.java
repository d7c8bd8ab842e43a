package io.quorumkv.service.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.quorumkv.service.support.TestCluster;
import io.quorumkv.service.support.TestKeys;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The defaults: an open public API, Actuator on the main port. The admin operations still
 * need an admin credential, health shows no details (no data folder path) to anyone else,
 * and the public requests never enter Spring Security.
 */
class AdminAccessTest {

	@TempDir
	static Path root;

	static TestCluster node;

	@BeforeAll
	static void start() {
		Map<String, String> properties = new HashMap<>(TestKeys.properties());
		properties.put("management.endpoints.web.exposure.include", "health,metrics,prometheus,quorumkv");
		node = new TestCluster(root, 1, properties).startAll();
	}

	@AfterAll
	static void stop() {
		if (node != null) {
			node.close();
		}
	}

	@Test
	void thePublicApiIsOpenByDefault() {
		node.client(0).put().uri("/v0/entity?id=open").bodyValue("v").exchange().expectStatus().isCreated();
		node.client(0).get().uri("/v0/entity?id=open").exchange().expectStatus().isOk();
		// Nothing of Spring Security's: no security headers, no session cookie.
		node.client(0)
			.get()
			.uri("/v0/entity?id=open")
			.exchange()
			.expectHeader()
			.doesNotExist(HttpHeaders.CACHE_CONTROL)
			.expectHeader()
			.doesNotExist("X-Content-Type-Options")
			.expectHeader()
			.doesNotExist(HttpHeaders.SET_COOKIE);
		assertThat(node.bean(0, SecurityGate.class)
			.protects(org.springframework.http.server.PathContainer.parsePath("/v0/entity"))).isFalse();
	}

	@Test
	void adminOperationsNeedAnAdminCredentialInEverySpelling() {
		WebTestClient anonymous = node.client(0);
		anonymous.post().uri("/actuator/quorumkv/flush").exchange().expectStatus().isUnauthorized();
		anonymous.post().uri("/actuator/quorumkv/compact").exchange().expectStatus().isUnauthorized();
		anonymous.post().uri(node.uri(0, "/%61ctuator/quorumkv/flush")).exchange().expectStatus().isUnauthorized();
		anonymous.post()
			.uri(node.uri(0, "/actuator;x=1/quorumkv/flush"))
			.exchange()
			.expectStatus()
			.value((status) -> assertThat(status).isIn(400, 401, 404));
		anonymous.get().uri("/actuator/quorumkv/status").exchange().expectStatus().isUnauthorized();
		node.client(0)
			.mutate()
			.defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(TestKeys.WRITER))
			.build()
			.post()
			.uri("/actuator/quorumkv/compact")
			.exchange()
			.expectStatus()
			.isForbidden();
		node.client(0)
			.mutate()
			.defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(TestKeys.ADMIN))
			.build()
			.post()
			.uri("/actuator/quorumkv/flush")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isOk();
	}

	@Test
	void healthShowsNoDataFolderToAnyoneButAnAdmin() {
		String anonymous = node.client(0)
			.get()
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(anonymous).isEqualTo("{\"groups\":[\"liveness\",\"readiness\"],\"status\":\"UP\"}");
		String reader = node.client(0)
			.mutate()
			.defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(TestKeys.READER))
			.build()
			.get()
			.uri("/actuator/health")
			.exchange()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(reader).doesNotContain(root.toString()).doesNotContain("components");
		String admin = node.client(0)
			.mutate()
			.defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(TestKeys.ADMIN))
			.build()
			.get()
			.uri("/actuator/health")
			.exchange()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(admin).contains("\"storage\"").contains("\"diskSpace\"");
	}

}
