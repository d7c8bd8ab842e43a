package io.quorumkv.service.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.http.server.PathContainer;
import org.springframework.security.web.server.WebFilterChainProxy;

/** Which requests the gate sends through Spring Security, in every spelling of a path. */
class SecurityGateTest {

	private static boolean protects(SecurityGate gate, String path) {
		return gate.protects(PathContainer.parsePath(path));
	}

	@Test
	void withAnOpenApiOnlyManagementPathsPass() {
		SecurityGate gate = new SecurityGate(new WebFilterChainProxy(List.of()), "/actuator", false);
		for (String path : List.of("/actuator", "/actuator/", "/actuator/quorumkv/flush", "/%61ctuator/quorumkv",
				"/actuator;x=1/quorumkv", "/ac%74uator;a=b/health")) {
			assertThat(protects(gate, path)).as(path).isTrue();
		}
		for (String path : List.of("/v0/entity", "/", "/actuators", "/v0/actuator", "/internal/v0/stream",
				"/actuatorquorumkv")) {
			assertThat(protects(gate, path)).as(path).isFalse();
		}
	}

	@Test
	void withAnAuthenticatedApiEverythingButTheInternalApiPasses() {
		SecurityGate gate = new SecurityGate(new WebFilterChainProxy(List.of()), "/actuator", true);
		assertThat(protects(gate, "/v0/entity")).isTrue();
		assertThat(protects(gate, "/")).isTrue();
		assertThat(protects(gate, "/nowhere")).isTrue();
		assertThat(protects(gate, "/actuator/health")).isTrue();
		assertThat(protects(gate, "/internal/v0/stream")).isFalse();
		assertThat(protects(gate, "/%69nternal/v0/entry")).isFalse();
	}

	@Test
	void aDeeperOrRootBasePath() {
		SecurityGate deep = new SecurityGate(new WebFilterChainProxy(List.of()), "/manage/actuator", false);
		assertThat(protects(deep, "/manage/actuator/quorumkv")).isTrue();
		assertThat(protects(deep, "/manage/other")).isFalse();
		assertThat(protects(deep, "/manage")).isFalse();
		// Actuator at the root: a management request looks like any other, so all pass.
		SecurityGate root = new SecurityGate(new WebFilterChainProxy(List.of()), "/", false);
		assertThat(protects(root, "/quorumkv/flush")).isTrue();
		assertThat(protects(root, "/v0/entity")).isTrue();
	}

}
