package io.quorumkv.service.security;

import java.net.InetAddress;

import io.quorumkv.service.security.SecurityProperties.PublicApi;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The startup line that says who may use a node's API: a warning wherever anyone beyond
 * this host could read and write, or read API keys off the network.
 */
class ExposureTest {

	@Test
	void openOnLoopbackIsInformation() throws Exception {
		Exposure.Line line = Exposure.line(InetAddress.getByName("127.0.0.1"), 8080, false, PublicApi.OPEN);
		assertThat(line.warning()).isFalse();
		assertThat(line.text()).contains("127.0.0.1 port 8080 (this host only) over plain HTTP")
			.contains("anyone on this host may read, write and delete every key");
	}

	@Test
	void openBeyondThisHostIsAWarning() throws Exception {
		assertThat(Exposure.line(null, 8080, true, PublicApi.OPEN)).isEqualTo(new Exposure.Line(true,
				"Public API OPEN to anyone who reaches every interface port 8080 over TLS:"
						+ " they may read, write and delete every key. Set quorumkv.security.public-api=authenticated"
						+ " and TLS (docs/security.md)"));
		assertThat(Exposure.line(InetAddress.getByName("10.1.2.3"), 8080, false, PublicApi.OPEN).warning()).isTrue();
	}

	@Test
	void apiKeysOverPlainHttpFromOtherHostsAreAWarning() throws Exception {
		assertThat(Exposure.line(null, 8080, false, PublicApi.AUTHENTICATED).text())
			.contains("API keys cross the network in plain text");
		assertThat(Exposure.line(null, 8080, false, PublicApi.AUTHENTICATED).warning()).isTrue();
		assertThat(Exposure.line(InetAddress.getByName("127.0.0.1"), 8080, false, PublicApi.AUTHENTICATED).warning())
			.isFalse();
		assertThat(Exposure.line(null, 8443, true, PublicApi.AUTHENTICATED)).isEqualTo(new Exposure.Line(false,
				"Public API on every interface port 8443 over TLS: clients authenticate (API keys or certificates)"));
	}

}
