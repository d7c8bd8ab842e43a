package io.quorumkv.service.support;

import java.time.Duration;

import reactor.netty.http.client.HttpClient;

import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Clients of a node under test on loopback. */
public final class TestClients {

	private TestClients() {
	}

	/**
	 * As {@link #forPort(int)}, but every request on a connection of its own: for tests
	 * that must not depend on keep-alive reuse after a refused request (a request after a
	 * PUT refused before its body was read can go unanswered; see docs/reliability.md).
	 */
	public static WebTestClient forPortWithoutKeepAlive(int port) {
		return WebTestClient.bindToServer(new ReactorClientHttpConnector(HttpClient.newConnection()))
			.baseUrl("http://127.0.0.1:" + port)
			.responseTimeout(Duration.ofSeconds(30))
			.codecs((codecs) -> codecs.defaultCodecs().maxInMemorySize(8 << 20))
			.build();
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
