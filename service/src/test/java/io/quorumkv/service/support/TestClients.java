package io.quorumkv.service.support;

import java.time.Duration;

import org.springframework.test.web.reactive.server.WebTestClient;

/** Clients of a node under test on loopback. */
public final class TestClients {

	private TestClients() {
	}

	/** A client of the node on {@code port}: 30 s answer timeout, bodies up to 8 MB. */
	public static WebTestClient forPort(int port) {
		return WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + port)
			.responseTimeout(Duration.ofSeconds(30))
			.codecs((codecs) -> codecs.defaultCodecs().maxInMemorySize(8 << 20))
			.build();
	}

}
